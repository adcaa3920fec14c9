package train

import (
	"fmt"
	"strings"
)

// The configurations by their names in run specs and flags. Each is one
// entry of Configurations, which gives its name in experiment specs and
// Table 3 and what it trains on and from; nothing else lists them.
const (
	ConfigIID       = "iid"         // i.i.d. data only: the baseline
	ConfigIIDThenT  = "iid-t"       // IID→T: from the IID model, suite only
	ConfigIIDPlusT  = "iid+t"       // IID+T: from the initial model, i.i.d. + suite
	ConfigIIDThenIT = "iid-(iid+t)" // IID→(IID+T): from the IID model, i.i.d. + suite
	ConfigT         = "t"           // T: from the initial model, suite only

	// The prompted configurations: a language model asked, not trained.
	// Their "training data" are their demonstrations, drawn by
	// prompt.Choose from what the fold may see: none (zero-shot), the
	// i.i.d. training rows, the T_train cases of the seen functionalities,
	// or both (BeLUGA's IID+T for prompting).
	ConfigPrompt         = "prompt"
	ConfigPromptIID      = "prompt-iid"
	ConfigPromptT        = "prompt-t"
	ConfigPromptIIDPlusT = "prompt-iid+t"
)

// ConfigurationInfo is a configuration's one entry in the registry: its
// name in run specs and flags, its name in experiment specs and Table 3,
// and what it trains on and from.
type ConfigurationInfo struct {
	Name, Display string
	// FromIID says it starts from the IID baseline's model (from_iid);
	// the others start from the initial model.
	FromIID bool
	// IID and Suite say whether it trains on the i.i.d. training data and
	// on the suite.
	IID, Suite bool
	// Prompt marks a prompted configuration: a language model asked with
	// demonstrations (prompted.go), none trained. DemoIID and DemoSuite
	// say where its demonstrations come from: the i.i.d. training rows,
	// the T_train cases of the functionalities its fold keeps.
	Prompt, DemoIID, DemoSuite bool
}

// Configurations are the configurations in Table 3's order: BeLUGA's four
// (IID, IID→T, IID+T, IID→(IID+T)); T, the suite alone from the initial
// model, for suites without an i.i.d. dataset (Luz de Araujo & Roth's 2022
// HateCheck setting); and the prompted ones.
var Configurations = []ConfigurationInfo{
	{Name: ConfigIID, Display: "IID", IID: true},
	{Name: ConfigIIDThenT, Display: "IID-T", FromIID: true, Suite: true},
	{Name: ConfigIIDPlusT, Display: "IID+T", IID: true, Suite: true},
	{Name: ConfigIIDThenIT, Display: "IID-IID+T", FromIID: true, IID: true, Suite: true},
	{Name: ConfigT, Display: "T", Suite: true},
	{Name: ConfigPrompt, Display: "0-shot", Prompt: true},
	{Name: ConfigPromptIID, Display: "k-shot IID", Prompt: true, DemoIID: true},
	{Name: ConfigPromptT, Display: "k-shot T", Prompt: true, DemoSuite: true},
	{Name: ConfigPromptIIDPlusT, Display: "k-shot IID+T", Prompt: true, DemoIID: true, DemoSuite: true},
}

// readsIIDTrain says whether a run of the configuration reads the i.i.d.
// training rows: to train on, or to draw demonstrations from.
func (c ConfigurationInfo) readsIIDTrain() bool { return c.IID || c.DemoIID }

// UsesIID says whether the configuration needs a task's i.i.d. data: it
// trains on it, starts from the model trained on it, or draws
// demonstrations from it. A trained one also scores the i.i.d. test set;
// only T runs on a suite alone.
func (c ConfigurationInfo) UsesIID() bool { return c.IID || c.FromIID || c.DemoIID }

// LookupConfiguration returns the configuration a name denotes, in either
// spelling (package train's iid-(iid+t) or Table 3's IID-IID+T), whatever
// the case.
func LookupConfiguration(name string) (ConfigurationInfo, error) {
	for _, c := range Configurations {
		if strings.EqualFold(name, c.Name) || strings.EqualFold(name, c.Display) {
			return c, nil
		}
	}
	return ConfigurationInfo{}, fmt.Errorf("unknown configuration %q (want %s; IID-IID+T is the same as iid-(iid+t))", name, strings.Join(ConfigurationNames(), ", "))
}

// MustConfiguration is LookupConfiguration for a name the program itself
// spells (one of the constants above): it panics on an unknown one, which
// is a bug, never user input.
func MustConfiguration(name string) ConfigurationInfo {
	c, err := LookupConfiguration(name)
	if err != nil {
		panic(err)
	}
	return c
}

// ParseConfiguration returns package train's name of the configuration a
// name denotes (LookupConfiguration).
func ParseConfiguration(name string) (string, error) {
	c, err := LookupConfiguration(name)
	return c.Name, err
}

// ConfigurationNames lists the configurations' names in run specs and
// flags, in Table 3's order.
func ConfigurationNames() []string { return configurationNames(nil) }

// configurationNames lists the names of the configurations keep accepts
// (all for nil), in Table 3's order.
func configurationNames(keep func(ConfigurationInfo) bool) []string {
	var names []string
	for _, c := range Configurations {
		if keep == nil || keep(c) {
			names = append(names, c.Name)
		}
	}
	return names
}

// config is the registry's entry of the run's configuration (zero for a
// name Validate would refuse).
func (s *RunSpec) config() ConfigurationInfo {
	c, _ := LookupConfiguration(s.Configuration)
	return c
}
