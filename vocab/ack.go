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
