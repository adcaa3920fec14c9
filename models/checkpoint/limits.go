package checkpoint

import (
	"fmt"

	"github.com/beluga-nlp/beluga/internal/memlimit"
)

// A weights file is a few megabytes that may describe gigabytes: a zip
// member that deflates a thousandfold, a state dict whose five thousand
// keys view one storage, a safetensors header whose offsets overlap. The
// readers add up what a file would make them allocate — storage bytes read,
// tensors materialised — and check the sum against limits before
// allocating any of it.

// limits bound what reading one checkpoint allocates: always the memory
// check every model size passes (memlimit), and, when the checkpoint's
// config is known, what a model of that config can need.
type limits struct {
	// maxBytes bounds the bytes of one checkpoint; 0 when no config is
	// known.
	maxBytes float64
	// config describes the config for errors.
	config string
}

// bytesPerParam bounds what one parameter can take in a weights file and
// once read: float64 storage (8 bytes) read into float32 (4), with room
// for families whose layers the estimate undercounts (gated feed-forwards,
// untied output embeddings, buffers).
const bytesPerParam = 32

// minConfigBytes is the least a config allows, so that tiny test models
// keep their buffers and small vocabularies.
const minConfigBytes = 256 << 20

// limitsFor bounds a checkpoint of config c.
func limitsFor(c *Config) limits {
	if c == nil {
		return limits{}
	}
	p := c.ParamEstimate()
	return limits{
		maxBytes: bytesPerParam*p + minConfigBytes,
		config:   fmt.Sprintf("a %s config of about %.3g parameters", c.ModelType, p),
	}
}

// check refuses a reading that would allocate need bytes.
func (l limits) check(what string, need float64) error {
	if l.maxBytes > 0 && need > l.maxBytes {
		return fmt.Errorf("%s would take %s, more than the %s %s can need", what, memlimit.Bytes(need), memlimit.Bytes(l.maxBytes), l.config)
	}
	return memlimit.Check(what, need)
}

// ParamEstimate estimates the parameters of a model of c from its sizes
// alone — embeddings (words, positions, token types; a word-vector or
// ELECTRA embedding width besides), and per layer attention (4 h²),
// feed-forward (2 h f) and the vectors beside them — so that absurd sizes
// are refused before anything is listed or read.
func (c *Config) ParamEstimate() float64 {
	h, f, l := float64(c.HiddenSize), float64(c.IntermediateSize), float64(c.NumHiddenLayers)
	p := (float64(c.VocabSize)+float64(c.MaxPositionEmbeddings)+float64(c.TypeVocabSize))*h + l*(4*h*h+2*h*f+9*h+f)
	if c.EmbeddingSize > 0 {
		p += float64(c.VocabSize) * float64(c.EmbeddingSize)
	}
	return p
}
