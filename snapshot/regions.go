package snapshot

import "slices"

// MaxRegions caps Result.Regions; Result.RegionCount tells how many there
// were.
const MaxRegions = 20

// cellSize is the side of the square grid cells that changed pixels are
// grouped in. Two changed pixels belong to the same region when their cells
// are the same or touch (8-connectivity of cells), so a changed word or a
// dotted outline is one region instead of one per glyph or dot: pixels up to
// 8 px apart are always joined, pixels in cells that do not touch (at least
// 9 px apart) never directly.
const cellSize = 8

// cell collects the changed pixels of one grid cell: count and bounds.
type cell struct {
	n              int32
	x0, y0, x1, y1 int32
}

// grid is the mismatch mask of one comparison at cell resolution, filled
// while comparing. Each stripe of rows writes only its own cells.
type grid struct {
	cw, ch int
	cells  []cell
}

func newGrid(w, h int) *grid {
	cw, ch := (w+cellSize-1)/cellSize, (h+cellSize-1)/cellSize
	return &grid{cw: cw, ch: ch, cells: make([]cell, cw*ch)}
}

// add records a changed pixel.
func (g *grid) add(x, y int) {
	c := &g.cells[(y/cellSize)*g.cw+x/cellSize]
	x32, y32 := int32(x), int32(y)
	if c.n == 0 {
		c.x0, c.y0, c.x1, c.y1 = x32, y32, x32, y32
	} else {
		c.x0, c.x1 = min(c.x0, x32), max(c.x1, x32)
		c.y0, c.y1 = min(c.y0, y32), max(c.y1, y32)
	}
	c.n++
}

// regions joins touching cells into regions and returns the largest
// (by changed pixels, then by area, then top-left first) up to limit, and
// the total number of regions. It consumes the grid: visited cells are
// marked by negating their count.
func (g *grid) regions(limit int) ([]Region, int) {
	var all []Region
	var stack []int
	for start := range g.cells {
		if g.cells[start].n <= 0 {
			continue
		}
		first := g.cells[start]
		r := cell{x0: first.x0, y0: first.y0, x1: first.x1, y1: first.y1}
		g.cells[start].n = -g.cells[start].n
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c := g.cells[i]
			r.n -= c.n // c.n is negated: add the pixel count
			r.x0, r.y0 = min(r.x0, c.x0), min(r.y0, c.y0)
			r.x1, r.y1 = max(r.x1, c.x1), max(r.y1, c.y1)
			cx, cy := i%g.cw, i/g.cw
			for ny := max(cy-1, 0); ny <= min(cy+1, g.ch-1); ny++ {
				for nx := max(cx-1, 0); nx <= min(cx+1, g.cw-1); nx++ {
					j := ny*g.cw + nx
					if g.cells[j].n > 0 {
						g.cells[j].n = -g.cells[j].n
						stack = append(stack, j)
					}
				}
			}
		}
		all = append(all, Region{
			X: int(r.x0), Y: int(r.y0),
			Width: int(r.x1-r.x0) + 1, Height: int(r.y1-r.y0) + 1,
			Pixels: int(r.n),
		})
	}
	slices.SortFunc(all, func(a, b Region) int {
		if a.Pixels != b.Pixels {
			return b.Pixels - a.Pixels
		}
		if aa, ba := a.Width*a.Height, b.Width*b.Height; aa != ba {
			return ba - aa
		}
		if a.Y != b.Y {
			return a.Y - b.Y
		}
		return a.X - b.X
	})
	total := len(all)
	if len(all) > limit {
		all = all[:limit]
	}
	if all == nil {
		all = []Region{}
	}
	return all, total
}
