// This file holds the share-group acknowledgement types.

package vocab

import "fmt"

// AckType is a share-group acknowledgement type.
type AckType int8

// Ack types, numbered as Kafka's ShareAcknowledge API numbers them.
const (
	AckGap     AckType = 0
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	AckRenew   AckType = 4
)

// String returns the type's name, as ledgers and messages spell it.
func (a AckType) String() string {
	switch a {
	case AckGap:
		return "gap"
	case AckAccept:
		return "accept"
	case AckRelease:
		return "release"
	case AckReject:
		return "reject"
	case AckRenew:
		return "renew"
	}
	return fmt.Sprintf("AckType(%d)", int8(a))
}

// AckTypes lists the acknowledgement types, in Kafka's numbering. The slice
// is the caller's.
func AckTypes() []AckType { return []AckType{AckGap, AckAccept, AckRelease, AckReject, AckRenew} }

// ParseAckType returns the acknowledgement type named s, or an error naming
// the valid ones.
func ParseAckType(s string) (AckType, error) {
	for _, a := range AckTypes() {
		if a.String() == s {
			return a, nil
		}
	}
	return 0, fmt.Errorf("vocab: unknown acknowledgement type %q (valid: gap, accept, release, reject, renew)", s)
}
