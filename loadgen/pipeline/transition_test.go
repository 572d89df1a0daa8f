package pipeline

import "testing"

// TestTablesComplete: every state a machine's table leaves from or leads
// to has a step, the machine's own or the core's, so no transition strands
// a worker in a state that asks for nothing.
func TestTablesComplete(t *testing.T) {
	t.Parallel()
	core := map[state]bool{stRetry: true, stReplace: true, stClose: true, stExit: true}
	check := func(name string, hasStep func(state) bool, ends func(func(from, to state))) {
		ends(func(from, to state) {
			for _, s := range []state{from, to} {
				if s != stNone && !core[s] && !hasStep(s) {
					t.Errorf("%s: state %d (a row from %d to %d) has no step", name, s, from, to)
				}
			}
		})
	}
	m := NewMachine[int](Config{}, &seq{})
	check("Machine", func(s state) bool { return m.steps[s] != nil }, func(f func(from, to state)) {
		for _, r := range m.rows {
			f(r.from, r.to)
		}
	})
	c := NewCheckpointMachine[int](Config{Checkpoint: &CheckpointConfig{}}, &seq{})
	check("CheckpointMachine", func(s state) bool { return c.steps[s] != nil }, func(f func(from, to state)) {
		for _, r := range c.rows {
			f(r.from, r.to)
		}
	})
}
