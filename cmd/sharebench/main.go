// Command sharebench benchmarks and verifies transactional acknowledgements
// in Kafka share groups. See README.md, or run `sharebench --help`.
package main

import (
	"os"
	"os/signal"

	"github.com/sharebench/sharebench/internal/cli"
)

func main() {
	interrupt := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() { <-sig; close(interrupt) }()
	os.Exit(cli.Main(os.Args, &cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Interrupt: interrupt}))
}
