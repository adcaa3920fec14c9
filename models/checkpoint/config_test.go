package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestParseConfigWholeNumbers: a size written as a whole number with an
// exponent or a fraction (1e9, 768.0) is read as that number, in BERT's
// keys and in a family's own (DistilBERT's dim), so that an absurd one
// reaches the size check and its estimate; a value an integer field cannot
// hold is refused naming the field in config.json's terms, not the
// decoder's Go ones.
func TestParseConfigWholeNumbers(t *testing.T) {
	RegisterConfig("test-dim", FamilyConfig{Keys: map[string]string{"hidden_size": "dim"}})
	defer delete(familyConfigs, "test-dim")
	const rest = `"vocab_size": 10, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8, "max_position_embeddings": 8`
	for _, tc := range []struct {
		name, json string
		hidden     int
		err        string
	}{
		{"integer", `{"hidden_size": 768, ` + rest + `}`, 768, ""},
		{"exponent", `{"hidden_size": 1e9, ` + rest + `}`, 1000000000, ""},
		{"fraction zero", `{"hidden_size": 768.0, ` + rest + `}`, 768, ""},
		{"capital exponent", `{"hidden_size": 7.68E2, ` + rest + `}`, 768, ""},
		{"family key", `{"model_type": "test-dim", "dim": 1e9, ` + rest + `}`, 1000000000, ""},
		{"fraction", `{"hidden_size": 768.5, ` + rest + `}`, 0, `field "hidden_size": number 768.5, want a whole number`},
		{"beyond 2^53", `{"hidden_size": 1e300, ` + rest + `}`, 0, `field "hidden_size": number 1e300, want a whole number`},
		{"string", `{"hidden_size": "768", ` + rest + `}`, 0, `field "hidden_size": string, want a whole number`},
		{"family key fraction", `{"model_type": "test-dim", "dim": 7.5, ` + rest + `}`, 0, `field "dim": number 7.5, want a whole number`},
		{"float field", `{"hidden_size": 8, "layer_norm_eps": "small", ` + rest + `}`, 0, `field "layer_norm_eps": string, want a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.json))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.HiddenSize != tc.hidden {
				t.Errorf("hidden size %d, want %d", c.HiddenSize, tc.hidden)
			}
			// The file's own text is what is written back.
			if raw, ok := c.Extra["hidden_size"]; tc.name == "exponent" && (!ok || string(raw) != "1e9") {
				t.Errorf("Extra keeps %s, want the file's 1e9", raw)
			}
		})
	}
}

// TestWriteConfigKeepsNullPad: a config whose pad_token_id is null (Llama's,
// GPT-2's) is written back null, not as the 0 the int field reads it as —
// which would make token 0 the embedding's padding_idx on reloading — and
// one with a pad id keeps it.
func TestWriteConfigKeepsNullPad(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"model_type": "bert", "vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 4, "max_position_embeddings": 8, "pad_token_id": null}`, "null"},
		{`{"model_type": "bert", "vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 4, "max_position_embeddings": 8, "pad_token_id": 3}`, "3"},
	} {
		c, err := ParseConfig([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "config.json")
		if err := WriteConfig(p, c); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]json.RawMessage
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if got := string(out["pad_token_id"]); got != tc.want {
			t.Errorf("pad_token_id written %s, want %s", got, tc.want)
		}
	}
}
