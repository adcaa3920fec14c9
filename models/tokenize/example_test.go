package tokenize_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/beluga-nlp/beluga/models/tokenize"
)

func ExampleWordPiece_EncodeWithOffsets() {
	tk, err := tokenize.NewWordPieceFromVocab("testdata/vocab-small.txt", 0)
	if err != nil {
		log.Fatal(err)
	}
	text := "Café au lait, unaffable!"
	enc, offs := tk.EncodeWithOffsets(text, "", false)
	for i, id := range enc.IDs {
		fmt.Printf("%d %q\n", id, text[offs[i].Start:offs[i].End])
	}
	// Output:
	// 2 ""
	// 5 "Café"
	// 6 "au"
	// 7 "lait"
	// 10 ","
	// 15 "un"
	// 16 "aff"
	// 17 "able"
	// 11 "!"
	// 3 ""
}

func ExampleCache() {
	dir, err := os.MkdirTemp("", "tokens")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tk, err := tokenize.NewWordPieceFromVocab("testdata/vocab-small.txt", 64)
	if err != nil {
		log.Fatal(err)
	}
	cache, err := tokenize.NewCache(dir)
	if err != nil {
		log.Fatal(err)
	}
	inputs := []tokenize.Input{{Text: "hello world"}, {Text: "Café", Pair: "au lait", IsPair: true}}
	// The first run of a sweep tokenises and stores; the others read back.
	for run := 0; run < 2; run++ {
		encs, err := cache.Encode(context.Background(), tk, inputs)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(encs[1].IDs, encs[1].TypeIDs)
	}
	// Output:
	// [2 5 3 6 7 3] [0 0 0 1 1 1]
	// [2 5 3 6 7 3] [0 0 0 1 1 1]
}
