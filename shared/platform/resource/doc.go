// Package resource is the generic shape of a family: create, get, list, update and delete with
// the caller verified in the same round trip, an audit event in every mutation's transaction,
// optimistic concurrency, and O(page) lists. A family supplies only its types and rules: a
// Descriptor (what the API is: path, id prefix, list key, event kind) whose Binding is what
// Bind makes from the family's hooks constructor and its extra routes, and a hooks type with
// the methods of Hooks and any of the optional interfaces (Updater, Preparer, Deleter,
// Referenceable, UpdateReader, Joiner). Register is the one place routes reach a mux.
//
// # Names
//
// A family's types are named by one rule. <Name> is the resource's singular name and <Names>
// its collection's, each read after the package's name, which may stand for the same part of
// both (sshcerts.AuthorityItem and sshcerts.Authorities are SSH certificate authorities):
//
//   - <Name>Item is the stored item (it embeds store.Meta); a part that the items of several
//     families embed is <Name>Base (principals.SecretBase, edges.EdgeBase);
//   - <Name>JSON is its wire form, opening with Head (or UpdatedHead);
//   - <Names> is its hooks type, made by new<Names>, and <Names>Descriptor its Descriptor
//     (SSHCertificateAuthoritiesDescriptor for /ssh_certificate_authorities).
//
// "Family" means one thing: a resource kind served by the five operations, which Family
// implements generically and a package under shared/families declares.
package resource
