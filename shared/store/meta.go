package store

// Meta is the part of every resource item that the store manages: its key, id, account,
// creation time and version. Family items embed it.
type Meta struct {
	Key
	ID        string `dynamodbav:"id"`
	AccountID string `dynamodbav:"account"`
	CreatedAt int64  `dynamodbav:"created"`
	Version   int64  `dynamodbav:"v"`
}

// Base returns the Meta itself, so a family item satisfies Resource by embedding Meta.
func (m *Meta) Base() *Meta { return m }

// Resource is any item that embeds Meta.
type Resource interface{ Base() *Meta }
