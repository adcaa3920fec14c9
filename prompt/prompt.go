// Package prompt turns a classification task into prompts for a language
// model and reads a label back from what the model says: the prompted
// configurations of package train (zero-shot, and k-shot with
// demonstrations drawn only from what the run's fold may see) score every
// i.i.d. test input and every suite input through it.
//
// # Prompts
//
// A Template renders an input ("Text: {text}\nAnswer:"); a demonstration is
// a rendered input followed by its label's verbalizer (" hateful"). A
// prompt is
//
//	instruction SEP demo_1 SEP … demo_k SEP input
//
// and the model is asked for each label's verbalizer after it. The
// instruction and demonstrations are the same for every input of a run —
// the shared prefix a causal LM encodes once (models.CausalLM.Score).
//
// # Demonstrations
//
// Choose draws k demonstrations from a pool the caller builds from what
// the run may see, seeded and label-balanced: round-robin over the labels,
// each label's candidates in a seeded shuffle, the chosen ones in a
// seeded order. Package train builds the pool (the i.i.d. training rows,
// the T_train cases of the seen functionalities) and checks every chosen
// demonstration against the held-out fold again before a prompt is built.
//
// # Scoring
//
// A Scorer answers Requests: the log-likelihood of every option
// (in process with a Go decoder, LocalScorer; or an OpenAI-compatible
// /v1/completions endpoint with logprobs), or a generated answer parsed to
// a label (Answer.Label -1 when it names none: counted and shown as
// unparsed, never mapped to a label).
package prompt

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
)

// Spec is a prompted run's settings (train.RunSpec.Prompt).
type Spec struct {
	// Templates are the task's prompt templates; at least one.
	Templates []Template `json:"templates" yaml:"templates"`
	// Template names the one template the run scores (a sweep axis:
	// grid key prompt.template); empty scores every template and takes
	// the mean of their label probabilities as the run's prediction,
	// each template's own scores recorded beside it.
	Template string `json:"template,omitempty" yaml:"template,omitempty"`
	// Verbalizers map every task label to the text the model is asked
	// for after a prompt (" hateful"), the joining space included.
	Verbalizers map[string]string `json:"verbalizers" yaml:"verbalizers"`
	// K is the number of demonstrations of a k-shot configuration (a
	// sweep axis: grid key prompt.k); a zero-shot run has none.
	K int `json:"k,omitempty" yaml:"k,omitempty"`
	// Model is the decoder scored in process: a hub id, directory or
	// archive of a GPT-2, Llama or Qwen2 checkpoint.
	Model string `json:"model,omitempty" yaml:"model,omitempty"`
	// Endpoint is a server asked instead of an in-process model.
	Endpoint *Endpoint `json:"endpoint,omitempty" yaml:"endpoint,omitempty"`
}

// Template is one way of asking: an instruction before the
// demonstrations, the input's form with {text} (and {pair} for pair
// tasks), and the separator between the prompt's parts ("\n\n" when
// empty).
type Template struct {
	Name        string `json:"name" yaml:"name"`
	Instruction string `json:"instruction,omitempty" yaml:"instruction,omitempty"`
	Input       string `json:"input" yaml:"input"`
	Separator   string `json:"separator,omitempty" yaml:"separator,omitempty"`
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Validate checks the spec against the task's labels.
func (s *Spec) Validate(labels []string) error {
	if len(s.Templates) == 0 {
		return fmt.Errorf("prompt.templates: none (a prompted run needs at least one template)")
	}
	names := map[string]bool{}
	for i, t := range s.Templates {
		if !nameRE.MatchString(t.Name) {
			return fmt.Errorf("prompt.templates[%d].name: %q is not a name of letters, digits, '.', '_' and '-' (it names the template's folder of results)", i, t.Name)
		}
		if names[t.Name] {
			return fmt.Errorf("prompt.templates[%d].name: %q named twice", i, t.Name)
		}
		names[t.Name] = true
		if !strings.Contains(t.Input, "{text}") {
			return fmt.Errorf("prompt.templates[%d].input: %q has no {text}", i, t.Input)
		}
	}
	if s.Template != "" && !names[s.Template] {
		return fmt.Errorf("prompt.template: %q is none of the templates (%s)", s.Template, strings.Join(slices.Sorted(maps.Keys(names)), ", "))
	}
	seen := map[string]string{}
	for _, l := range labels {
		v, ok := s.Verbalizers[l]
		if !ok || v == "" {
			return fmt.Errorf("prompt.verbalizers: no verbalizer for label %q", l)
		}
		if o, dup := seen[v]; dup {
			return fmt.Errorf("prompt.verbalizers: labels %q and %q share the verbalizer %q", o, l, v)
		}
		seen[v] = l
	}
	for l := range s.Verbalizers {
		if !slices.Contains(labels, l) {
			return fmt.Errorf("prompt.verbalizers: %q is not a task label (%s)", l, strings.Join(labels, ", "))
		}
	}
	if s.K < 0 {
		return fmt.Errorf("prompt.k: %d is negative", s.K)
	}
	if (s.Model == "") == (s.Endpoint == nil) {
		return fmt.Errorf("prompt: set exactly one of model (scored in process) and endpoint")
	}
	if s.Endpoint != nil {
		return s.Endpoint.validate()
	}
	return nil
}

// Scored are the templates a run scores: the one Template names, else all.
func (s *Spec) Scored() []Template {
	if s.Template == "" {
		return s.Templates
	}
	for _, t := range s.Templates {
		if t.Name == s.Template {
			return []Template{t}
		}
	}
	return nil
}

// Options are the labels' verbalizers in the task's label order.
func (s *Spec) Options(labels []string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = s.Verbalizers[l]
	}
	return out
}

// Input is one text to classify (Pair set for a pair task).
type Input struct {
	Text   string `json:"text"`
	Pair   string `json:"pair,omitempty"`
	IsPair bool   `json:"is_pair,omitempty"`
}

// Demo is a demonstration: an input, its task label, and where it came
// from (recorded in the run's trained.json).
type Demo struct {
	Input
	Label int `json:"-"`
	// LabelName is the task label's name.
	LabelName string `json:"label"`
	// Source is "i.i.d. train" or "suite T_train".
	Source string `json:"source"`
	// File and Line locate an i.i.d. row; Functionality, Class, Type,
	// Case and InputIndex a suite input.
	File          string `json:"file,omitempty"`
	Line          int    `json:"line,omitempty"`
	Functionality string `json:"functionality,omitempty"`
	Class         string `json:"class,omitempty"`
	Type          string `json:"type,omitempty"`
	Case          int    `json:"case,omitempty"`
	InputIndex    int    `json:"input,omitempty"`
	Meta          string `json:"meta,omitempty"`
}

// Render writes an input in the template's form.
func (t Template) Render(in Input) string {
	s := strings.ReplaceAll(t.Input, "{text}", in.Text)
	return strings.ReplaceAll(s, "{pair}", in.Pair)
}

func (t Template) sep() string {
	if t.Separator == "" {
		return "\n\n"
	}
	return t.Separator
}

// Prefix is the part of every prompt of a run before its input: the
// instruction and the demonstrations, each followed by the separator.
func (t Template) Prefix(demos []Demo, options []string) string {
	var b strings.Builder
	if t.Instruction != "" {
		b.WriteString(t.Instruction + t.sep())
	}
	for _, d := range demos {
		b.WriteString(t.Render(d.Input) + options[d.Label] + t.sep())
	}
	return b.String()
}

// Choose picks k of pool's demonstrations, label-balanced and seeded: the
// candidates of each of the labels are shuffled, taken round-robin over
// the labels (a label that runs out leaves its turns to the others), and
// the k chosen are put in a seeded order, so that no label sits always
// last before the input. It returns the positions in pool.
func Choose(pool []Demo, labels, k int, seed uint64) ([]int, error) {
	if k == 0 {
		return nil, nil
	}
	if k > len(pool) {
		return nil, fmt.Errorf("%d demonstrations asked, %d to choose from", k, len(pool))
	}
	rng := rand.New(rand.NewPCG(seed, 0x70726f6d7074)) // "prompt"
	by := make([][]int, labels)
	for i, d := range pool {
		if d.Label < 0 || d.Label >= labels {
			return nil, fmt.Errorf("demonstration %d: label %d outside the task's %d", i, d.Label, labels)
		}
		by[d.Label] = append(by[d.Label], i)
	}
	for _, c := range by {
		rng.Shuffle(len(c), func(a, b int) { c[a], c[b] = c[b], c[a] })
	}
	var out []int
	for round := 0; len(out) < k; round++ {
		for _, c := range by {
			if round < len(c) && len(out) < k {
				out = append(out, c[round])
			}
		}
	}
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out, nil
}

// Probs turns the options' log-likelihoods into the labels' probabilities
// (a softmax over the options).
func Probs(logLik []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range logLik {
		m = max(m, v)
	}
	out := make([]float64, len(logLik))
	var z float64
	for i, v := range logLik {
		out[i] = math.Exp(v - m)
		z += out[i]
	}
	for i := range out {
		out[i] /= z
	}
	return out
}
