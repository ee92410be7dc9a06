package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/ids"
)

// Key is an item's primary key.
type Key struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
}

// AV returns the key as DynamoDB attribute values.
func (k Key) AV() map[string]types.AttributeValue {
	// Both values in one allocation: every request's read builds a key per item it fetches.
	v := &[2]types.AttributeValueMemberS{{Value: k.PK}, {Value: k.SK}}
	return map[string]types.AttributeValue{AttrPK: &v[0], AttrSK: &v[1]}
}

// The key layout of the single table. Every key is built by one of these functions; nothing
// else in the project concatenates key strings.
//
//	resource of an account   A#<account>#<id prefix>   <id>
//	account (auth state)     A#<account>               ACCOUNT
//	compiled IP restriction  A#<account>               IPX#<version>
//	token hash → principal   T#<sha256(token)>         T
//	uniqueness guard         U#<kind>#<value>          U
//	idempotent create        I#<account>               <sha256(key)>
//	outbox (events to carry) O#<shard>                 <event id>
//	audit log                E#<account>               <event id>
//	rate-limit counter       R#<account>               <window seconds>#<window index>
//	stream checkpoint        P#<consumer>              <shard id>
//	certificate job          J#<account>               <job id>
//	certificate due          D#due                     <Unix seconds, 10 digits>#<account>#<resource id>
//	ACME account             C#acme                    <directory URL>
//	Kubernetes operator CA   C#k8sop#<account>         CA
//	tenant (operator's list) N#tenants                 <account>
//	usage of a day           A#<account>               USAGE#<YYYY-MM-DD>
//	ended tunnel session     A#<account>               ENDED#<session id>
//	tunnel-server key        N#tunnel_servers          <key id>
//	tunnel session lease     D#lease                   <Unix seconds, 10 digits>#<account>#<session id>
//
// Every item of an account is in a partition that names it (AccountPartitions and its resource
// collections), except those it holds elsewhere (tokens, uniqueness guards, certificate due
// entries and jobs, outbox items), which its stored resources and audit log name: erasing an
// account reads only its own partitions (package operator).

// Collection is the partition holding every resource of one kind in an account.
func Collection(account, prefix string) string {
	return "A#" + account + "#" + prefix
}

// ResourceKey is the key of the resource id in account. The kind comes from the id's prefix,
// so a key for any referenced id can be built without knowing its family.
func ResourceKey(account, id string) Key {
	// A well-formed id's prefix ends at its last underscore (ids.Parse), any other's at its
	// first: the same place unless the id has several, the only case worth decoding its KSUID
	// for (keys are built on every request).
	prefix, rest, _ := strings.Cut(id, "_")
	if strings.IndexByte(rest, '_') >= 0 {
		if p, _, err := ids.Parse(id); err == nil {
			prefix = p
		}
	}
	return Key{PK: Collection(account, prefix), SK: id}
}

// AccountKey is the account's own item: the state every authenticated request reads.
func AccountKey(account string) Key {
	return Key{PK: "A#" + account, SK: "ACCOUNT"}
}

// IPXKey is the account's compiled API IP restriction at version v. A version's item never
// changes: a change writes the next version's item and deletes the previous one, so every
// request can read the small account item (which names the version) and a process reads a
// version's rules once.
func IPXKey(account string, v int64) Key {
	return Key{PK: "A#" + account, SK: "IPX#" + strconv.FormatInt(v, 10)}
}

// TokenHash is the hex SHA-256 of a bearer secret; only this is ever stored.
func TokenHash(token string) string {
	// Every request hashes its token: the buffers are on the stack, the result is the one
	// allocation.
	var in [64]byte
	sum := sha256.Sum256(append(in[:0], token...))
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

// TokenKey is the key of the item mapping a token hash to its principal.
func TokenKey(hash string) Key {
	return Key{PK: "T#" + hash, SK: "T"}
}

// GuardKey is a uniqueness guard: at most one item may hold value for kind.
func GuardKey(kind, value string) Key {
	return Key{PK: "U#" + kind + "#" + value, SK: "U"}
}

// IdempotencyKey is the key of the record of a create sent with an idempotency key in account
// by the API key credential (its ak_… id); keyHash is the idempotency key's TokenHash. The same
// idempotency key sent by another API key is another record. An account's records share a
// partition, so erasing the account finds them with one Query.
func IdempotencyKey(account, credential, keyHash string) Key {
	return Key{PK: "I#" + account, SK: credential + "#" + keyHash}
}

// AccountPartitions are the partitions of account apart from its resource collections
// (Collection): the account item's own (with its IP restriction versions and usage), its audit
// log, its rate counters, its idempotency records, its certificate jobs and its Kubernetes
// operators' CA.
func AccountPartitions(account string) []string {
	return []string{AccountKey(account).PK, EventLogKey(account, "").PK, RateKey(account, 0, 0).PK,
		IdempotencyKey(account, "", "").PK, CertJobKey(account, "").PK, OperatorCAKey(account).PK}
}

// TenantsPartition is the operator's list of tenants: one item per account, sorted by id, so
// accounts are listed by creation time without a scan.
const TenantsPartition = "N#tenants"

// TenantKey is account's item in TenantsPartition.
func TenantKey(account string) Key { return Key{PK: TenantsPartition, SK: account} }

// UsagePrefix begins the sort key of every usage item of an account.
const UsagePrefix = "USAGE#"

// UsageKey is the item counting what account used on day (UTC, YYYY-MM-DD), beside the account
// item in its partition.
func UsageKey(account, day string) Key { return Key{PK: "A#" + account, SK: UsagePrefix + day} }

// OutboxShards spreads outbox items over this many partitions, so a burst of mutations writes
// to several partitions.
const OutboxShards = 8

// OutboxPrefix begins the partition key of every outbox item: the table stream's consumers
// select committed events by it.
const OutboxPrefix = "O#"

// OutboxPartition is the partition of outbox shard n.
func OutboxPartition(n int) string { return OutboxPrefix + strconv.Itoa(n) }

// OutboxKey is the key of an event's outbox item.
func OutboxKey(eventID string) Key {
	h := fnv.New32a()
	h.Write([]byte(eventID))
	return Key{PK: OutboxPartition(int(h.Sum32() % OutboxShards)), SK: eventID}
}

// EventLogKey is the key of an event in its account's audit log.
func EventLogKey(account, eventID string) Key {
	return Key{PK: "E#" + account, SK: eventID}
}

// RateKey is the counter of account's requests in fixed window index (Unix time divided by the
// window) of windows of seconds; the length is part of the key so that a changed limit never
// reads counts of windows of another length. Its partition is apart from the account item's,
// which every request reads.
func RateKey(account string, seconds, index int64) Key {
	return Key{PK: "R#" + account, SK: strconv.FormatInt(seconds, 10) + "#" + strconv.FormatInt(index, 10)}
}

// StreamCheckpointKey is where the stream consumer named consumer records how far it has read
// shard (the local stream reader; in AWS each Pipe keeps its own position).
func StreamCheckpointKey(consumer, shard string) Key {
	return Key{PK: StreamCheckpoints(consumer), SK: shard}
}

// StreamCheckpoints is the partition of one stream consumer's checkpoints.
func StreamCheckpoints(consumer string) string { return "P#" + consumer }

// CertJobPrefix begins the partition key of every certificate job item: the certificate jobs'
// stream consumer selects them by it, as the events consumer selects outbox items.
const CertJobPrefix = "J#"

// CertJobKey is the key of the item of account's certificate job jobID: each account's jobs
// have their own partition, which erasing the account reads.
func CertJobKey(account, jobID string) Key {
	return Key{PK: CertJobPrefix + account, SK: jobID}
}

// CertDuePartition holds one item per managed certificate whose next job has a time (a renewal,
// a retry): its sort key begins with that time, so the scheduler's query for the items due by
// now reads exactly those and nothing else.
const CertDuePartition = "D#due"

// CertDueKey is the key of the resource id of account's next certificate job, due at (Unix
// seconds).
func CertDueKey(at int64, account, id string) Key {
	return Key{PK: CertDuePartition, SK: fmt.Sprintf("%010d#%s#%s", max(at, 0), account, id)}
}

// CertDueBefore is the sort key bound of the due items of times up to at: every key of an
// earlier or equal time sorts below it.
func CertDueBefore(at int64) string { return fmt.Sprintf("%010d#~", max(at, 0)) }

// ACMEAccountKey is the deployment's ACME account at the directory URL (its sealed key).
func ACMEAccountKey(directory string) Key { return Key{PK: "C#acme", SK: directory} }

// OperatorCAKey is the certificate authority that signs account's Kubernetes operators' binding
// certificates (its certificate and sealed key).
func OperatorCAKey(account string) Key { return Key{PK: "C#k8sop#" + account, SK: "CA"} }
