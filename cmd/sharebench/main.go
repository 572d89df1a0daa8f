// Command sharebench benchmarks and verifies transactional acknowledgements
// in Kafka share groups. See README.md, or run `sharebench --help`.
package main

import (
	"os"

	"github.com/sharebench/sharebench/internal/cli"
)

func main() { os.Exit(cli.MainWithSignals(os.Args)) }
