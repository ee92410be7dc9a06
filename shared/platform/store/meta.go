package store

// Meta is the part of every resource item that the store manages: its key, id, account,
// creation time and version. Family items embed it.
type Meta struct {
	Key
	ID        string `dynamodbav:"id"`
	AccountID string `dynamodbav:"account"`
	CreatedAt int64  `dynamodbav:"created"`
	Version   int64  `dynamodbav:"v"`
	// Refs counts the resources that reference this one (subscriptions referencing a
	// destination). It changes only through resource.Mutation.Reference, which also bumps
	// Version, so a delete conditioned on the version it read sees every new reference.
	Refs int64 `dynamodbav:"refs,omitempty"`
}

// Base returns the Meta itself, so a family item satisfies Resource by embedding Meta.
func (m *Meta) Base() *Meta { return m }

// Resource is any item that embeds Meta.
type Resource interface{ Base() *Meta }
