package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/derrors"
)

// Attribute names of the table's keys and of the fields the store itself manages.
const (
	AttrPK      = "pk"
	AttrSK      = "sk"
	AttrVersion = "v"
	AttrTTL     = "ttl"
)

// DB is the table and the client that reaches it.
type DB struct {
	Client Client
	Table  string
	// CheckUnits, when set (tests), makes every transaction under a metrics.Tally ask DynamoDB
	// for its capacity too and, once committed, calls CheckUnits with its writes, the write
	// units the store counted for each (nil when it could not count them, and asked) and the
	// units DynamoDB reported.
	CheckUnits func(items []types.TransactWriteItem, counted []float64, reported float64)
}

// ErrNotFound reports that an item does not exist (or belongs to another account).
var ErrNotFound = errors.New("store: item not found")

// IsNotFound reports whether err is or wraps ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Options configure the client.
type Options struct {
	Table    string // TABLE_NAME
	Endpoint string // DYNAMODB_ENDPOINT, for DynamoDB Local; empty in AWS
	// Config is the AWS configuration (awsconfig.New).
	Config *aws.Config
	// APIOptions are SDK middleware hooks (tests count round trips with one).
	APIOptions []func(*dynamodb.Options)
}

// Open builds a DB without any network I/O, so it is safe in Lambda init.
func Open(ctx context.Context, o Options) (*DB, error) {
	if o.Table == "" {
		return nil, errors.New("store: TABLE_NAME is not set")
	}
	cfg := o.Config
	if cfg == nil {
		return nil, errors.New("store: no AWS configuration")
	}
	opts := []func(*dynamodb.Options){retryOptions, func(d *dynamodb.Options) {
		if o.Endpoint != "" {
			d.BaseEndpoint = aws.String(o.Endpoint)
			// DynamoDB Local omits the CRC32 header on error responses.
			d.DisableValidateResponseChecksum = true
		}
	}}
	opts = append(opts, o.APIOptions...)
	return New(dynamodb.NewFromConfig(*cfg, opts...), o.Table), nil
}

// CreateTable creates the single table as template.yaml declares it (for local stacks and
// tests; in AWS the template owns it). It waits until the table is active.
func (db *DB) CreateTable(ctx context.Context) error { return db.createTable(ctx, true) }

// CreateTableWithoutStream creates the table with no stream, for tests that need no events and
// would suffer DynamoDB Local's cost of one: with a stream on, it makes concurrent transactions
// of the table wait on each other, several times slower, and hundreds at once time out on its
// locks (real DynamoDB does neither).
func (db *DB) CreateTableWithoutStream(ctx context.Context) error { return db.createTable(ctx, false) }

func (db *DB) createTable(ctx context.Context, stream bool) (err error) {
	defer derrors.Wrap(&err, "store.CreateTable(%s)", db.Table)
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(db.Table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(AttrPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(AttrSK), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(AttrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(AttrSK), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}
	if stream {
		// New images: the stream's consumers read what was committed from the record itself.
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	}
	_, err = db.Client.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil
	}
	if err != nil {
		return err
	}
	w := dynamodb.NewTableExistsWaiter(db.Client)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(db.Table)}, 60e9); err != nil {
		return err
	}
	_, err = db.Client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(db.Table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(AttrTTL), Enabled: aws.Bool(true),
		},
	})
	return err
}
