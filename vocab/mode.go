// This file holds the acknowledgement modes: the type, the list in report
// order, and what each mode implies.

package vocab

import (
	"fmt"
	"strings"
)

// Mode is an acknowledgement mode: how a worker acknowledges the records it
// processed and what that promises.
type Mode string

// The acknowledgement modes, in the order reports list them.
const (
	Implicit      Mode = "implicit"      // the next poll acks; at-least-once
	Explicit      Mode = "explicit"      // ack each record, then commit the acks; at-least-once
	Deferred      Mode = "deferred"      // commit the output transaction, then ack; at-least-once
	Transactional Mode = "transactional" // acks inside the producer transaction (KIP-1289); exactly-once
	ClassicEOS    Mode = "classic-eos"   // consumer group + sendOffsetsToTransaction; exactly-once
)

// AllName is the name that stands for every mode in a workload or a flag.
const AllName = "all"

// AllModes lists every mode in report order. The slice is the caller's.
func AllModes() []Mode {
	return []Mode{Implicit, Explicit, Deferred, Transactional, ClassicEOS}
}

// ParseMode returns the mode named s, or an error naming the valid modes.
func ParseMode(s string) (Mode, error) {
	for _, m := range AllModes() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("vocab: unknown mode %q (valid: %s, %s)", s, strings.Join(ModeNames(), ", "), AllName)
}

// ModeNames lists every mode's name in report order.
func ModeNames() []string { return Names(AllModes()) }

// Names returns the names of ws (modes, phases, finding kinds, any of the
// vocabulary's string words), in their order.
func Names[W ~string](ws []W) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = string(w)
	}
	return out
}

// Order is m's position in report order (implicit first), or len(AllModes)
// for an unknown mode, so sorting by Order puts unknown names last.
func (m Mode) Order() int {
	for i, x := range AllModes() {
		if x == m {
			return i
		}
	}
	return len(AllModes())
}

// String returns the mode's name.
func (m Mode) String() string { return string(m) }

// UsesShareGroup reports whether workers of mode m consume through a share
// group (every mode but classic-eos, which uses a classic consumer group).
func (m Mode) UsesShareGroup() bool { return m != ClassicEOS }

// Transactional reports whether mode m writes its outputs in producer
// transactions.
func (m Mode) Transactional() bool {
	return m == Deferred || m == Transactional || m == ClassicEOS
}

// StagesAcks reports whether mode m acknowledges inside the producer
// transaction (share acks or consumer offsets), so its acks commit or abort
// with its outputs.
func (m Mode) StagesAcks() bool { return m == Transactional || m == ClassicEOS }

// CanReject reports whether a worker of mode m can reject a record on
// purpose: implicit mode accepts whatever the next poll finds, and a
// classic consumer group has no per-record acknowledgement.
func (m Mode) CanReject() bool { return m != Implicit && m != ClassicEOS }

// DeliveryLimited reports whether mode m's records carry a delivery count
// bounded by the share group's delivery limit (classic-eos refetches after
// every rebalance and has no limit).
func (m Mode) DeliveryLimited() bool { return m.UsesShareGroup() }
