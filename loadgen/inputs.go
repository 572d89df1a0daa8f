// This file holds what an input record carries besides its header: the
// body of its value (zeros, the workload's payload file, or one of a pool
// of partly random payloads, as the OpenMessaging Benchmark builds them)
// and its key (none, or one of a pool of keys handed out in turn or at
// random, placed on the partition Kafka's default partitioner picks).

package loadgen

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/sharebench/sharebench/workloads"
)

// ErrPayloadFile is returned when the workload's payload file cannot be
// used at run time (it changed since the workload was read).
var ErrPayloadFile = errors.New("loadgen: payload file")

// keyPoolSize and keyBytes follow OMB's KeyDistributor: 10 000 keys, each
// 7 random bytes written in unpadded URL-safe base64.
const (
	keyPoolSize = 10_000
	keyBytes    = 7
)

// inputBodies builds the values and keys of one mode run's inputs. Its
// pools are built once per mode from the run's seed and only read after,
// so the producers share it.
type inputBodies struct {
	size int
	// body is every value's content after the header when pool is empty:
	// zeros, or the payload file.
	body []byte
	// pool holds randomized payloads, each size bytes; value i takes
	// pool[i % len(pool)] (OMB cycles through its pool the same way).
	pool [][]byte
	keys [][]byte // nil: records carry no key
	// random picks keys at random (RANDOM_NANO) rather than in turn.
	random bool
}

func newInputBodies(spec *workloads.Spec, rng *rand.Rand) (*inputBodies, error) {
	b := &inputBodies{size: spec.MessageSizeBytes, body: make([]byte, spec.MessageSizeBytes)}
	switch {
	case spec.PayloadFile != "":
		data, err := os.ReadFile(spec.PayloadFile)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrPayloadFile, spec.PayloadFile, err)
		}
		if len(data) != spec.MessageSizeBytes {
			return nil, fmt.Errorf("%w %s: %d bytes now, %d when the workload was read; run again", ErrPayloadFile, spec.PayloadFile, len(data), spec.MessageSizeBytes)
		}
		b.body = data
	case spec.RandomizedPayloads:
		// OMB's layout: the random bytes first, then zeros.
		random := int(float64(spec.MessageSizeBytes) * spec.RandomBytesRatio)
		b.pool = make([][]byte, spec.RandomizedPayloadPoolSize)
		for i := range b.pool {
			p := make([]byte, spec.MessageSizeBytes)
			for j := 0; j < random; j += 8 {
				v := rng.Uint64()
				for k := 0; k < 8 && j+k < random; k++ {
					p[j+k] = byte(v >> (8 * k))
				}
			}
			b.pool[i] = p
		}
	}
	switch spec.KeyDistributor {
	case workloads.KeyRoundRobin, workloads.KeyRandomNano:
		b.random = spec.KeyDistributor == workloads.KeyRandomNano
		b.keys = make([][]byte, keyPoolSize)
		raw := make([]byte, keyBytes)
		for i := range b.keys {
			for j := range raw {
				raw[j] = byte(rng.Uint32())
			}
			b.keys[i] = []byte(base64.RawURLEncoding.EncodeToString(raw))
		}
	}
	return b, nil
}

// fill writes the body of input n (counted per producer) into v, whose
// header the caller writes after.
func (b *inputBodies) fill(v []byte, n uint64) {
	if len(b.pool) > 0 {
		copy(v, b.pool[n%uint64(len(b.pool))])
		return
	}
	copy(v, b.body)
}

// keyer hands out one producer's keys; each producer has its own, as each
// OMB producer has its own KeyDistributor.
type keyer struct {
	b    *inputBodies
	next int
	rng  *rand.Rand
}

// key returns the next key, nil when records carry none. KEY_ROUND_ROBIN
// starts at the pool's second key, as OMB's KeyRoundRobin does.
func (k *keyer) key() []byte {
	if k.b.keys == nil {
		return nil
	}
	if k.b.random {
		return k.b.keys[k.rng.IntN(len(k.b.keys))]
	}
	k.next++
	if k.next >= len(k.b.keys) {
		k.next = 0
	}
	return k.b.keys[k.next]
}

// keyPartition is the partition Kafka's default partitioner gives a keyed
// record: the positive murmur2 hash of the key modulo the partitions.
func keyPartition(key []byte, partitions int32) int32 {
	return int32(murmur2(key)&0x7fffffff) % partitions
}

// murmur2 is the 32-bit MurmurHash2 with Kafka's seed, as Kafka's
// Utils.murmur2 computes it, so a keyed record lands on the partition a
// Kafka producer would pick.
func murmur2(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
