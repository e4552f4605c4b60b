package snapshot

import (
	"bytes"
	"fmt"
	"image/png"
	"sync"
)

// encoderBuffers lets successive encodes reuse image/png's compression
// buffers (several hundred KiB each).
var encoderBuffers = &bufferPool{}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() *png.EncoderBuffer {
	v, _ := b.p.Get().(*png.EncoderBuffer)
	return v
}

func (b *bufferPool) Put(v *png.EncoderBuffer) { b.p.Put(v) }

// EncodePNG encodes img as a PNG, favouring speed over size (diff images and
// crops are written often and read rarely). An image whose pixels are all
// opaque is written as RGB, otherwise as RGBA with straight alpha.
func EncodePNG(img *Image) ([]byte, error) {
	if err := checkImage(img, "encoded"); err != nil {
		return nil, err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: encoderBuffers}
	var buf bytes.Buffer
	buf.Grow(len(img.Pix) / 8)
	if err := enc.Encode(&buf, img.NRGBA()); err != nil {
		return nil, fmt.Errorf("snapshot: encode %s: %w", img.Name, err)
	}
	return buf.Bytes(), nil
}
