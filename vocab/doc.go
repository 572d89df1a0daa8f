// Package vocab is sharebench's one vocabulary: the acknowledgement modes,
// the crash phases, the acknowledgement types, the final share states of a
// record, the verifier's finding kinds, the fault kinds, the target kinds,
// the compression codecs and the simulator's invariant ids. Each is a type with its constants, its
// parse and its format, defined once here and imported by every package
// that names one; vocab itself imports nothing of sharebench, so workload
// specs, result files, the verifier and the reports can all use the words
// without depending on the runner that acts on them.
package vocab
