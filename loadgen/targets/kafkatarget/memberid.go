// This file holds the share-group member ids the transactional worker
// chooses, spelled as Kafka's own clients spell them.

package kafkatarget

import (
	"crypto/rand"
	"encoding/base64"
)

// newMemberID returns a member id as Kafka's share consumer makes one
// (Uuid.randomUuid().toString()): a version-4 UUID of 16 random bytes in
// unpadded base64url, 22 characters. Brokers may refuse longer ids, and a
// random one never repeats an earlier incarnation's. Kafka never hands out
// the all-zero UUID or one whose text starts with '-' (it would read as a
// command-line flag); neither is drawn here.
func newMemberID() string {
	for {
		var b [16]byte
		rand.Read(b[:])         // never fails (crypto/rand)
		b[6] = b[6]&0x0f | 0x40 // version 4
		b[8] = b[8]&0x3f | 0x80 // IETF variant
		s := base64.RawURLEncoding.EncodeToString(b[:])
		if s[0] != '-' {
			return s
		}
	}
}
