// Package train fits models on i.i.d. data and test suites: batching, the
// optimiser, the four configurations (IID, IID→T, IID+T, IID→(IID+T)) and the
// eight methods (vanilla, L2, dropout, LP, LP-FT, IRM, Group-DRO, Fish).
package train
