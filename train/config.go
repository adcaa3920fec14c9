package train

import (
	"fmt"
	"strings"
)

// The four configurations of BeLUGA, and T: the suite alone from the
// initial model, for suites without an i.i.d. dataset (Luz de Araujo &
// Roth's 2022 HateCheck setting).
const (
	ConfigIID       = "iid"         // i.i.d. data only
	ConfigIIDThenT  = "iid-t"       // IID→T: from the IID model, suite only
	ConfigIIDPlusT  = "iid+t"       // IID+T: from the initial model, i.i.d. + suite
	ConfigIIDThenIT = "iid-(iid+t)" // IID→(IID+T): from the IID model, i.i.d. + suite
	ConfigT         = "t"           // T: from the initial model, suite only
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

// readsIIDTrain says whether a run of the configuration reads the i.i.d.
// training rows: to train on, or to draw demonstrations from.
func (c ConfigurationInfo) readsIIDTrain() bool { return c.IID || c.DemoIID }

// Configurations are the configurations in Table 3's order.
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

// LookupConfiguration returns the configuration a name denotes, in either
// spelling (package train's iid-(iid+t) or Table 3's IID-IID+T), whatever
// the case.
func LookupConfiguration(name string) (ConfigurationInfo, error) {
	for _, c := range Configurations {
		if strings.EqualFold(name, c.Name) || strings.EqualFold(name, c.Display) {
			return c, nil
		}
	}
	var names []string
	for _, c := range Configurations {
		names = append(names, c.Name)
	}
	return ConfigurationInfo{}, fmt.Errorf("unknown configuration %q (want %s; IID-IID+T is the same as iid-(iid+t))", name, strings.Join(names, ", "))
}

// ParseConfiguration returns package train's name of the configuration a
// name denotes (LookupConfiguration).
func ParseConfiguration(name string) (string, error) {
	c, err := LookupConfiguration(name)
	return c.Name, err
}

// config is the registry's entry of the run's configuration (zero for a
// name Validate would refuse).
func (s *RunSpec) config() ConfigurationInfo {
	c, _ := LookupConfiguration(s.Configuration)
	return c
}
