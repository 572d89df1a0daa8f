// This file exports internals to the external tests of this package.

package workloads

// BuiltinFS holds the embedded built-in workload files.
var BuiltinFS = builtinFS
