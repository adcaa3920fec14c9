package tokenize

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/beluga-nlp/beluga/models"
)

func TestWordLevel(t *testing.T) {
	w, err := NewWordLevel([]string{"[PAD]", "[UNK]", "the", "film", ",", "n't", "is", "good", "."}, 6)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		{"The film is good .", []int{2, 3, 6, 7, 8}},
		{"the film, is good.", []int{2, 3, 4, 6, 7, 8}},
		{"unseen words", []int{1, 1}},
		{"", []int{1}},
		{"the the the the the the the the", []int{2, 2, 2, 2, 2, 2}},
	}
	for _, tc := range tests {
		enc, _ := w.Encode(tc.text, "", false)
		if !reflect.DeepEqual(enc.IDs, tc.want) {
			t.Errorf("%q → %v, want %v", tc.text, enc.IDs, tc.want)
		}
	}
	enc, _ := w.Encode("film", "good", true)
	if !reflect.DeepEqual(enc.IDs, []int{3, 7}) || !reflect.DeepEqual(enc.TypeIDs, []int{0, 1}) {
		t.Errorf("pair → %v %v", enc.IDs, enc.TypeIDs)
	}
	path := filepath.Join(t.TempDir(), "vocab.txt")
	if err := SaveVocab(path, w.Words()); err != nil {
		t.Fatal(err)
	}
	back, err := ReadVocab(path)
	if err != nil || !reflect.DeepEqual(back, w.Words()) {
		t.Errorf("vocabulary round trip: %v, %v", back, err)
	}
	if _, err := NewWordLevel([]string{"a", "b"}, 0); err == nil {
		t.Error("no error for a vocabulary without [PAD], [UNK]")
	}
}

func TestUnknownID(t *testing.T) {
	wl, err := NewWordLevel([]string{"[PAD]", "[UNK]", "film"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wp, _ := smallWordPiece(t, 0)
	tests := []struct {
		name string
		tk   interface {
			Encode(text, pair string, isPair bool) (models.Encoding, error)
			UnknownID() int
		}
		text string
		pos  int // index of the unknown word's token
	}{
		{"wordlevel", wl, "film zzqx", 1},
		{"wordpiece", wp, "hello \u2603", 2},
	}
	for _, tc := range tests {
		enc, err := tc.tk.Encode(tc.text, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if got := enc.IDs[tc.pos]; got != tc.tk.UnknownID() {
			t.Errorf("%s: %q → %v, token %d is %d, UnknownID %d", tc.name, tc.text, enc.IDs, tc.pos, got, tc.tk.UnknownID())
		}
	}
}
