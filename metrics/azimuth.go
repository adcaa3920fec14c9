package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"

	"github.com/beluga-nlp/beluga/suites"
)

// AzimuthFailed is Azimuth's PerturbationTest.is_failed for an invariance
// test (expect_flip=False): the perturbed input fails when its predicted
// class differs from the original's, or when its top-class confidence is
// more than threshold away from the original's top-class confidence
// (delta = round(|new − orig|, 4), strictly greater fails). Azimuth's
// default threshold 1 never fails on confidence.
func AzimuthFailed(orig, pert Prediction, threshold float64) bool {
	if pert.Class != orig.Class {
		return true
	}
	return AzimuthDelta(orig, pert) > threshold
}

// AzimuthDelta is the confidence delta Azimuth reports: the absolute change
// of the top-class confidence, rounded to 4 decimals (half to even, as
// Python's round on the nearest binary value).
func AzimuthDelta(orig, pert Prediction) float64 {
	d := math.Abs(topConfidence(pert) - topConfidence(orig))
	return math.RoundToEven(d*1e4) / 1e4
}

// topConfidence is the largest class probability (Azimuth's
// np.max(probs)), or the single confidence of a pred-only prediction.
func topConfidence(p Prediction) float64 {
	if p.Probs == nil {
		return p.Conf
	}
	m := math.Inf(-1)
	for _, v := range p.Probs {
		m = math.Max(m, v)
	}
	return m
}

// azimuthResults scores a case of kind azimuth: every perturbation against
// the first input (the original, whose own result the all_except_first
// aggregation drops).
func azimuthResults(preds []Prediction, threshold float64) []result {
	rs := make([]result, len(preds))
	rs[0] = rPass
	for j := 1; j < len(preds); j++ {
		rs[j] = passIf(!AzimuthFailed(preds[0], preds[j], threshold))
	}
	return rs
}

// SmartTag is Azimuth's behavioural-testing smart tags of one utterance:
// whether at least one of its tests of each family failed.
type SmartTag struct {
	Row                 int    `json:"row"`
	Utterance           string `json:"utterance"`
	FailedFuzzyMatching bool   `json:"failed_fuzzy_matching"`
	FailedPunctuation   bool   `json:"failed_punctuation"`
}

// SmartTags computes the smart tags of every utterance that has a scored
// case of kind azimuth in res, in row order. The family of a case is its
// functionality's class ("Fuzzy Matching" or "Punctuation"), its utterance
// the row in its meta (as package suites/azimuth writes them).
func SmartTags(s *suites.Suite, res *Result) ([]SmartTag, error) {
	type key struct {
		fn string
		id int
	}
	verdict := make(map[key]Verdict, len(res.Cases))
	for _, c := range res.Cases {
		verdict[key{c.Functionality, c.Case}] = c.Verdict
	}
	byRow := map[int]*SmartTag{}
	var rows []int
	for _, f := range s.Functionalities {
		if f.Expect.Kind != suites.ExpectAzimuth {
			continue
		}
		for _, c := range f.Cases {
			v, ok := verdict[key{f.Name, c.ID}]
			if !ok {
				continue // not scored (another split)
			}
			var m struct {
				Row *int `json:"row"`
			}
			if err := json.Unmarshal(c.Meta, &m); err != nil || m.Row == nil {
				return nil, fmt.Errorf("functionality %q case %d: smart tags need the utterance's row in meta ({\"row\": N})", f.Name, c.ID)
			}
			t := byRow[*m.Row]
			if t == nil {
				t = &SmartTag{Row: *m.Row, Utterance: c.Inputs[0].Text}
				byRow[*m.Row] = t
				rows = append(rows, *m.Row)
			}
			if v == Fail {
				switch f.Class {
				case "Fuzzy Matching":
					t.FailedFuzzyMatching = true
				case "Punctuation":
					t.FailedPunctuation = true
				}
			}
		}
	}
	sort.Ints(rows)
	out := make([]SmartTag, len(rows))
	for i, r := range rows {
		out[i] = *byRow[r]
	}
	return out, nil
}

// WriteSmartTags writes one line per utterance (row, the two tags, the
// utterance) and the counts of tagged utterances.
func WriteSmartTags(w io.Writer, tags []SmartTag) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tfailed_fuzzy_matching\tfailed_punctuation\tutterance")
	fuzzy, punct := 0, 0
	for _, t := range tags {
		fmt.Fprintf(tw, "%d\t%v\t%v\t%s\n", t.Row, t.FailedFuzzyMatching, t.FailedPunctuation, t.Utterance)
		if t.FailedFuzzyMatching {
			fuzzy++
		}
		if t.FailedPunctuation {
			punct++
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d utterances: %d failed_fuzzy_matching, %d failed_punctuation\n", len(tags), fuzzy, punct)
	return err
}
