package snapshot

import (
	"encoding/binary"
	"math"
	"sync"
)

// This file is pixelmatch 8.0's colour distance: both pixels in OKLab
// (Björn Ottosson, 2020) with Ottosson's toe-corrected lightness Lr, and the
// HyAB distance |ΔLr| + √(Δa² + Δb²) (Abasi et al., 2019) against the
// threshold itself (1 is black against white). pixelmatch 8 approximates
// two steps, sRGB decoding and the cube root, with lookup tables and linear
// interpolation; those approximations move pixels across the threshold, so
// they are reproduced here step for step, each operation rounding as in
// JavaScript (see the note on float64 conversions in pixelmatch.go).

// srgbLinear is the sRGB decoding of each byte value c/255: c/12.92 up to
// 0.04045, else ((c+0.055)/1.055)^2.4, with the power rounded as V8's
// Math.pow rounds it (Node 20). Go's math.Pow differs from it in the last
// bit for 96 of the 256 entries, enough to change counts, so the values
// are written out. The 257th entry repeats the 256th for interpolation.
var srgbLinear = [257]float64{
	0, 0.0003035269835488375, 0.000607053967097675, 0.0009105809506465125,
	0.00121410793419535, 0.0015176349177441874, 0.001821161901293025, 0.0021246888848418626,
	0.0024282158683907, 0.0027317428519395373, 0.003035269835488375, 0.003346535763899161,
	0.003676507324047436, 0.004024717018496307, 0.004391442037410293, 0.004776953480693729,
	0.005181516702338386, 0.005605391624202723, 0.006048833022857055, 0.006512090792594474,
	0.006995410187265387, 0.007499032043226175, 0.008023192985384994, 0.008568125618069307,
	0.009134058702220787, 0.009721217320237847, 0.010329823029626938, 0.010960094006488246,
	0.011612245179743887, 0.012286488356915872, 0.012983032342173012, 0.013702083047289686,
	0.014443843596092545, 0.01520851442291271, 0.01599629336550963, 0.016807375752887384,
	0.017641954488384078, 0.018500220128379697, 0.019382360956935723, 0.0202885630566524,
	0.021219010376003558, 0.02217388479338738, 0.02315336617811041, 0.024157632448504756,
	0.025186859627361627, 0.026241221894849898, 0.027320891639074897, 0.028426039504420793,
	0.0295568344378088, 0.030713443732993635, 0.03189603307301153, 0.033104766570885055,
	0.03433980680868217, 0.03560131487502034, 0.03688945040110004, 0.0382043715953465,
	0.03954623527673283, 0.04091519690685319, 0.042311410620809675, 0.043735029256973465,
	0.04518620438567554, 0.0466650863368801, 0.048171824226889426, 0.04970656598412723,
	0.05126945837404324, 0.052860647023180246, 0.05448027644244237, 0.05612849004960009,
	0.05780543019106723, 0.0595112381629812, 0.06124605423161761, 0.06301001765316767,
	0.06480326669290577, 0.06662593864377289, 0.06847816984440017, 0.07036009569659588,
	0.07227185068231748, 0.07421356838014963, 0.07618538148130785, 0.07818742180518633,
	0.08021982031446831, 0.0822827071298148, 0.08437621154414882, 0.08650046203654976,
	0.08865558628577294, 0.09084171118340767, 0.09305896284668747, 0.0953074666309647,
	0.09758734714186246, 0.09989872824711389, 0.1022417330881013, 0.10461648409110419,
	0.10702310297826761, 0.10946171077829933, 0.1119324278369056, 0.11443537382697373,
	0.11697066775851084, 0.11953842798834562, 0.12213877222960187, 0.12477181756095049,
	0.12743768043564743, 0.1301364766903643, 0.13286832155381798, 0.13563332965520566,
	0.13843161503245183, 0.14126329114027164, 0.14412847085805777, 0.14702726649759498,
	0.14995978981060856, 0.15292615199615017, 0.1559264637078274, 0.1589608350608804,
	0.16202937563911096, 0.1651321945016676, 0.16826940018969075, 0.1714411007328226,
	0.17464740365558504, 0.17788841598362914, 0.18116424424986022, 0.184474994500441,
	0.18782077230067787, 0.1912016827407914, 0.19461783044157582, 0.19806931955994886,
	0.20155625379439707, 0.20507873639031693, 0.20863687014525575, 0.21223075741405523,
	0.21586050011389923, 0.21952619972926923, 0.2232279573168085, 0.22696587351009836,
	0.23074004852434915, 0.23455058216100522, 0.238397573812271, 0.24228112246555486,
	0.24620132670783548, 0.25015828472995344, 0.25415209433082675, 0.2581828529215958,
	0.26225065752969623, 0.26635560480286247, 0.2704977910130658, 0.27467731206038465,
	0.2788942634768104, 0.2831487404299921, 0.2874408377269175, 0.29177064981753587,
	0.2961382707983211, 0.3005437944157765, 0.3049873140698863, 0.30946892281750854,
	0.31398871337571754, 0.31854677812509186, 0.32314320911295075, 0.3277780980565422,
	0.33245153634617935, 0.33716361504833037, 0.341914424908661, 0.3467040563550296,
	0.35153259950043936, 0.3564001441459435, 0.3613067797835095, 0.3662525955988395,
	0.3712376804741491, 0.37626212299090644, 0.3813260114325301, 0.386429433787049,
	0.39157247774972326, 0.39675523072562685, 0.40197777983219574, 0.4072402119017367,
	0.41254261348390375, 0.4178850708481375, 0.4232676699860717, 0.4286904966139067,
	0.4341536361747489, 0.4396571738409188, 0.44520119451622786, 0.45078578283822346,
	0.45641102318040466, 0.4620769996544071, 0.467783796112159, 0.47353149614800955,
	0.4793201831008268, 0.4851499400560704, 0.4910208498478356, 0.4969329950608704,
	0.5028864580325687, 0.5088813208549338, 0.5149176653765214, 0.5209955732043543,
	0.5271151257058131, 0.5332764040105052, 0.5394794890121071, 0.5457244613701866,
	0.5520114015120001, 0.5583403896342679, 0.5647115057049292, 0.5711248294648731,
	0.5775804404296506, 0.5840784178911641, 0.5906188409193369, 0.5972017883637634,
	0.6038273388553378, 0.6104955708078648, 0.6172065624196511, 0.6239603916750761,
	0.6307571363461468, 0.6375968739940326, 0.6444796819705821, 0.6514056374198242,
	0.6583748172794486, 0.665387298282272, 0.6724431569576875, 0.6795424696330938,
	0.6866853124353134, 0.6938717612919899, 0.7011018919329731, 0.7083757798916868,
	0.7156935005064807, 0.7230551289219693, 0.7304607400903537, 0.7379104087727308,
	0.7454042095403874, 0.7529422167760779, 0.7605245046752924, 0.7681511472475071,
	0.7758222183174236, 0.7835377915261935, 0.7912979403326302, 0.799102738014409,
	0.8069522576692516, 0.8148465722161012, 0.8227857543962835, 0.8307698767746546,
	0.83879901174074, 0.846873231509858, 0.8549926081242338, 0.8631572134541023,
	0.8713671191987973, 0.8796223968878317, 0.8879231178819663, 0.8962693533742664,
	0.9046611743911496, 0.9130986517934192, 0.9215818562772946, 0.9301108583754237,
	0.938685728457888, 0.9473065367331999, 0.9559733532492861, 0.9646862478944651,
	0.9734452903984125, 0.9822505503331171, 0.9911020971138298, 1,
	1,
}

// OKLab's matrices: linear sRGB to LMS, and cube-rooted LMS to a and b.
const (
	lmsLR, lmsLG, lmsLB = 0.4122214708, 0.5363325363, 0.0514459929
	lmsMR, lmsMG, lmsMB = 0.2119034982, 0.6806995451, 0.1073969566
	lmsSR, lmsSG, lmsSB = 0.0883024619, 0.2817188376, 0.6299787005
	labAL, labAM, labAS = 1.9779984951, 2.4285922050, 0.4505937099
	labBL, labBM, labBS = 0.0259040371, 0.7827717662, 0.8086757660
	labLL, labLM, labLS = 0.2104542553, 0.7936177850, 0.0040720468
)

// cbrtSteps is the number of intervals of the cube root table over 0..1;
// below cbrtExact of them the cube root is taken exactly, because linear
// interpolation is far off where the curve bends hardest (near black).
const (
	cbrtSteps = 4096
	cbrtExact = 8
)

// okTables are the tables pixelmatch 8 computes at load time, built here
// on the first OKLab comparison (no command pays for them at start-up).
type okTables struct {
	// lms[c][ch] is the contribution of byte value ch of channel c (r, g,
	// b) to L, M and S: the matrix entry times srgbLinear[ch].
	lms [3][3][256]float64
	// cbrt[i] is the cube root of i/cbrtSteps, two entries past 1 (a sum of
	// the matrix row may round just above 1).
	cbrt [cbrtSteps + 2]float64
	// toe constants of the lightness: k1, k2, k3 = (1+k1)/(1+k2), and
	// 4*k2*k3, each rounded as JavaScript evaluates them.
	k1, k3, k4 float64
}

var okTablesOnce = sync.OnceValue(func() *okTables {
	t := &okTables{}
	rows := [3][3]float64{{lmsLR, lmsLG, lmsLB}, {lmsMR, lmsMG, lmsMB}, {lmsSR, lmsSG, lmsSB}}
	for ch := range 256 {
		lin := srgbLinear[ch]
		for c := range 3 {
			for out := range 3 {
				t.lms[c][out][ch] = rows[out][c] * lin
			}
		}
	}
	for i := range t.cbrt {
		t.cbrt[i] = jsCbrt(float64(i) / cbrtSteps)
	}
	// Variables, not constants: Go folds constant expressions exactly,
	// where JavaScript rounds each step.
	k1, k2, four := 0.206, 0.03, 4.0
	t.k1 = k1
	t.k3 = (1 + k1) / (1 + k2)
	t.k4 = float64(four*k2) * t.k3
	return t
})

// jsCbrt is the cube root as V8's Math.cbrt computes it (FreeBSD's
// s_cbrt.c: a 5-bit estimate from the exponent, a polynomial to 23 bits,
// rounding away from zero to 23 bits, one Newton step); Go's math.Cbrt
// differs from it in the last bit for about one value in twelve. Only
// finite non-negative arguments reach it.
func jsCbrt(x float64) float64 {
	const (
		b1 = 715094163 // (1023 - 1023/3 - 0.03306235651) * 2^20
		b2 = 696219795 // (1023 - 1023/3 - 54/3 - 0.03306235651) * 2^20
		p0 = 1.87595182427177009643
		p1 = -1.88497979543377169875
		p2 = 1.621429720105354466140
		p3 = -0.758397934778766047437
		p4 = 0.145996192886612446982
	)
	bits := math.Float64bits(x)
	hx := uint32(bits >> 32)
	if bits == 0 {
		return x
	}
	var t float64
	if hx < 0x00100000 { // subnormal: scale by 2^54 first
		t = x * 0x1p54
		t = math.Float64frombits(uint64(uint32(math.Float64bits(t)>>32)/3+b2) << 32)
	} else {
		t = math.Float64frombits(uint64(hx/3+b1) << 32)
	}
	r := float64(t*t) * float64(t/x)
	poly := float64(p0+float64(r*float64(p1+float64(r*p2)))) + float64(float64(float64(r*r)*r)*float64(p3+float64(r*p4)))
	t = float64(t * poly)
	t = math.Float64frombits((math.Float64bits(t) + 0x80000000) &^ 0x3fffffff)
	s := float64(t * t)
	r = x / s
	r = (r - t) / (float64(t+t) + r)
	return t + float64(t*r)
}

// cubeRoot is pixelmatch 8's table cube root of x in 0..1.
func (t *okTables) cubeRoot(x float64) float64 {
	f := float64(x * cbrtSteps)
	i := int(f)
	if i < cbrtExact {
		return jsCbrt(x)
	}
	return t.cbrt[i] + float64(float64(t.cbrt[i+1]-t.cbrt[i])*float64(f-float64(i)))
}

// linear is srgbLinear interpolated at a fractional channel value 0..255
// (a translucent pixel blended over its background).
func linear(v float64) float64 {
	i := int(v)
	return srgbLinear[i] + float64(float64(srgbLinear[i+1]-srgbLinear[i])*float64(v-float64(i)))
}

// lightness is the toe-corrected OKLab lightness Lr of cube-rooted LMS.
func (t *okTables) lightness(l, m, s float64) float64 {
	L := float64(float64(labLL*l)+float64(labLM*m)) - float64(labLS*s)
	x := float64(t.k3*L) - t.k1
	return 0.5 * (x + math.Sqrt(float64(x*x)+float64(t.k4*L)))
}

// okColor is one colour in the terms the distance needs: cube-rooted LMS
// (a and b are linear in them) and the lightness Lr.
type okColor struct{ l, m, s, lr float64 }

// okOpaque converts an opaque sRGB colour.
func (t *okTables) okOpaque(r, g, b uint8) okColor {
	c := okColor{
		l: t.cubeRoot(float64(t.lms[0][0][r]+t.lms[1][0][g]) + t.lms[2][0][b]),
		m: t.cubeRoot(float64(t.lms[0][1][r]+t.lms[1][1][g]) + t.lms[2][1][b]),
		s: t.cubeRoot(float64(t.lms[0][2][r]+t.lms[1][2][g]) + t.lms[2][2][b]),
	}
	c.lr = t.lightness(c.l, c.m, c.s)
	return c
}

// okBlended converts a colour already blended to fractional channels.
func (t *okTables) okBlended(r, g, b float64) okColor {
	lr, lg, lb := linear(r), linear(g), linear(b)
	c := okColor{
		l: t.cubeRoot(float64(float64(lmsLR*lr)+float64(lmsLG*lg)) + float64(lmsLB*lb)),
		m: t.cubeRoot(float64(float64(lmsMR*lr)+float64(lmsMG*lg)) + float64(lmsMB*lb)),
		s: t.cubeRoot(float64(float64(lmsSR*lr)+float64(lmsSG*lg)) + float64(lmsSB*lb)),
	}
	c.lr = t.lightness(c.l, c.m, c.s)
	return c
}

// hyab compares the HyAB distance of two colours with maxDelta without a
// square root (it is at most maxDelta iff |ΔLr| <= maxDelta and
// Δa² + Δb² <= (maxDelta - |ΔLr|)²): 0 within it, else -1 when the second
// colour is darker (lower Lr) and 1 otherwise.
func hyab(c1, c2 *okColor, maxDelta float64) int {
	dLr := c1.lr - c2.lr
	if rest := maxDelta - math.Abs(dLr); rest >= 0 {
		dl, dm, ds := c1.l-c2.l, c1.m-c2.m, c1.s-c2.s
		da := float64(float64(labAL*dl)-float64(labAM*dm)) + float64(labAS*ds)
		db := float64(float64(labBL*dl)+float64(labBM*dm)) - float64(labBS*ds)
		if float64(da*da)+float64(db*db) <= float64(rest*rest) {
			return 0
		}
	}
	if dLr > 0 {
		return -1
	}
	return 1
}

// checker8 is pixelmatch 8's background for translucent pixels: for pixel
// index i, one of 8 dark (48) or light (207) colours from the top three
// bits of a Fibonacci hash of i, one bit per channel.
func checker8(i int) (r, g, b int) {
	h := uint32(i) * 0x9e3779b1
	return 48 + 159*int(h>>31), 48 + 159*int(h>>30&1), 48 + 159*int(h>>29&1)
}

// okCacheBits sizes okCache: 4096 colours, 144 KiB.
const okCacheBits = 12

// okCache is a direct-mapped memo of opaque colours' okColor, one per
// goroutine: a screen has few distinct colours, and the conversion (three
// cube roots and a square root) costs far more than a look-up. It changes
// no result.
type okCache struct {
	keys [1 << okCacheBits]uint32 // the RGB of the slot, with bit 24 set when filled
	vals [1 << okCacheBits]okColor
}

var okCaches = sync.Pool{New: func() any { return new(okCache) }}

// get returns the okColor of opaque RGB word rgb (low 24 bits), valid
// until the next get.
func (c *okCache) get(t *okTables, rgb uint32) *okColor {
	slot := (rgb * 0x9e3779b1) >> (32 - okCacheBits)
	if c.keys[slot] != rgb|1<<24 {
		c.keys[slot], c.vals[slot] = rgb|1<<24, t.okOpaque(uint8(rgb), uint8(rgb>>8), uint8(rgb>>16))
	}
	return &c.vals[slot]
}

// okDelta is pixelmatch 8's colorDelta for the pixel at byte offset k of
// both images, which differ there: 0 when within maxDelta, else -1 when the
// second is darker and 1 otherwise. Translucent pixels are blended over
// white, or with checkerboard over checker8.
func okDelta(t *okTables, cache *okCache, img1, img2 []uint8, k int, checkerboard bool, maxDelta float64) int {
	w1 := binary.LittleEndian.Uint32(img1[k:])
	w2 := binary.LittleEndian.Uint32(img2[k:])
	if w1>>24 == 255 && w2>>24 == 255 {
		c1 := *cache.get(t, w1&0xffffff) // copied: the second get may take its slot
		return hyab(&c1, cache.get(t, w2&0xffffff), maxDelta)
	}
	rb, gb, bb := 255, 255, 255
	if checkerboard {
		rb, gb, bb = checker8(k >> 2)
	}
	blend := func(w uint32) okColor {
		a := int(w >> 24)
		ch := func(v, bg int) float64 { return float64(v*a+bg*(255-a)) / 255 }
		return t.okBlended(ch(int(w&0xff), rb), ch(int(w>>8&0xff), gb), ch(int(w>>16&0xff), bb))
	}
	c1, c2 := blend(w1), blend(w2)
	return hyab(&c1, &c2, maxDelta)
}
