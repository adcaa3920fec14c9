// Package datasets reads the i.i.d. datasets BeLUGA pairs with its suites
// (GLUE SST-2 and QQP, SQuAD v1.1), halves their official validation sets as
// BeLUGA does, and downloads data into a checksummed local cache.
package datasets
