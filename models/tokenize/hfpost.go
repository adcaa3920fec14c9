package tokenize

import (
	"encoding/json"
	"fmt"
)

// tmplItem is one element of a post-processing template: special token ids,
// or the tokens of sequence 0 (A) or 1 (B), with their type id.
type tmplItem struct {
	special []int
	seq     int // -1 for special tokens
	typeID  int
}

// postProcessor adds the special tokens around a text or a pair (HF's
// BertProcessing, RobertaProcessing and TemplateProcessing are all
// templates) and, for byte-level tokenizers, trims the spaces off offsets.
type postProcessor struct {
	single, pair []tmplItem
	trimOffsets  bool
	name         string
}

// added is the number of special tokens the template adds.
func (p *postProcessor) added(isPair bool) int {
	t := p.single
	if isPair {
		t = p.pair
	}
	n := 0
	for _, it := range t {
		n += len(it.special)
	}
	return n
}

// checkIDs refuses a special token id outside the vocabulary of size n.
func (p *postProcessor) checkIDs(n int) error {
	for _, t := range [][]tmplItem{p.single, p.pair} {
		for _, it := range t {
			for _, id := range it.special {
				if id < 0 || id >= n {
					return fmt.Errorf("special token id %d outside 0…%d (the vocabulary's %d tokens)", id, n-1, n)
				}
			}
		}
	}
	return nil
}

// noPost is the behaviour without a post-processor: no special tokens, the
// pair's tokens of type 1.
func noPost() *postProcessor {
	return &postProcessor{single: []tmplItem{{seq: 0}}, pair: []tmplItem{{seq: 0}, {seq: 1, typeID: 1}}, name: "none"}
}

type hfPost struct {
	Type           string            `json:"type"`
	Sep            []any             `json:"sep"`
	CLS            []any             `json:"cls"`
	TrimOffsets    *bool             `json:"trim_offsets"`
	AddPrefixSpace *bool             `json:"add_prefix_space"`
	Single         []json.RawMessage `json:"single"`
	Pair           []json.RawMessage `json:"pair"`
	SpecialTokens  map[string]struct {
		ID  string `json:"id"`
		IDs []int  `json:"ids"`
	} `json:"special_tokens"`
	Processors []json.RawMessage `json:"processors"`
}

// tokenID reads a [token, id] pair.
func tokenID(v []any, what string) (int, error) {
	if len(v) != 2 {
		return 0, fmt.Errorf("%s is not a [token, id] pair", what)
	}
	f, ok := v[1].(float64)
	if !ok {
		return 0, fmt.Errorf("%s id is not a number", what)
	}
	return int(f), nil
}

func buildPost(raw json.RawMessage) (*postProcessor, error) {
	var p hfPost
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	switch p.Type {
	case "BertProcessing", "RobertaProcessing":
		cls, err := tokenID(p.CLS, "cls")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Type, err)
		}
		sep, err := tokenID(p.Sep, "sep")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Type, err)
		}
		c, s := []int{cls}, []int{sep}
		if p.Type == "BertProcessing" {
			single := []tmplItem{{special: c, seq: -1}, {seq: 0}, {special: s, seq: -1}}
			pair := append(append([]tmplItem{}, single...), tmplItem{seq: 1, typeID: 1}, tmplItem{special: s, seq: -1, typeID: 1})
			return &postProcessor{single: single, pair: pair, name: p.Type}, nil
		}
		// RoBERTa: <s> A </s></s> B </s>, every type id 0.
		single := []tmplItem{{special: c, seq: -1}, {seq: 0}, {special: s, seq: -1}}
		pair := append(append([]tmplItem{}, single...), tmplItem{special: s, seq: -1}, tmplItem{seq: 1}, tmplItem{special: s, seq: -1})
		return &postProcessor{single: single, pair: pair, trimOffsets: boolOr(p.TrimOffsets, true), name: p.Type}, nil
	case "TemplateProcessing":
		parse := func(items []json.RawMessage) ([]tmplItem, error) {
			var out []tmplItem
			for i, r := range items {
				var it struct {
					SpecialToken *struct {
						ID     string `json:"id"`
						TypeID int    `json:"type_id"`
					} `json:"SpecialToken"`
					Sequence *struct {
						ID     string `json:"id"`
						TypeID int    `json:"type_id"`
					} `json:"Sequence"`
				}
				if err := json.Unmarshal(r, &it); err != nil {
					return nil, fmt.Errorf("item %d: %w", i, err)
				}
				switch {
				case it.SpecialToken != nil:
					st, ok := p.SpecialTokens[it.SpecialToken.ID]
					if !ok || len(st.IDs) == 0 {
						return nil, fmt.Errorf("item %d: special token %q has no ids", i, it.SpecialToken.ID)
					}
					out = append(out, tmplItem{special: st.IDs, seq: -1, typeID: it.SpecialToken.TypeID})
				case it.Sequence != nil:
					seq := 0
					switch it.Sequence.ID {
					case "A":
					case "B":
						seq = 1
					default:
						return nil, fmt.Errorf("item %d: sequence %q", i, it.Sequence.ID)
					}
					out = append(out, tmplItem{seq: seq, typeID: it.Sequence.TypeID})
				default:
					return nil, fmt.Errorf("item %d is neither SpecialToken nor Sequence", i)
				}
			}
			return out, nil
		}
		single, err := parse(p.Single)
		if err != nil {
			return nil, fmt.Errorf("TemplateProcessing single: %w", err)
		}
		pair, err := parse(p.Pair)
		if err != nil {
			return nil, fmt.Errorf("TemplateProcessing pair: %w", err)
		}
		return &postProcessor{single: single, pair: pair, name: p.Type}, nil
	case "ByteLevel":
		pp := noPost()
		pp.trimOffsets, pp.name = boolOr(p.TrimOffsets, true), p.Type
		return pp, nil
	case "Sequence":
		out := noPost()
		out.name = "Sequence"
		adds := 0
		for i, r := range p.Processors {
			q, err := buildPost(r)
			if err != nil {
				return nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			out.trimOffsets = out.trimOffsets || q.trimOffsets
			if q.name != "ByteLevel" {
				adds++
				out.single, out.pair = q.single, q.pair
			}
			out.name += "," + q.name
		}
		if adds > 1 {
			return nil, fmt.Errorf("Sequence: more than one processor adds special tokens")
		}
		return out, nil
	}
	return nil, fmt.Errorf("post_processor type %q is not supported", p.Type)
}
