// Package access holds the IP access resources: IP policies (/ip_policies), their rules
// (/ip_policy_rules) and IP restrictions (/ip_restrictions). Restrictions of type api are
// enforced by this service on itself: package iprestrict keeps their compiled state, and every
// change here that concerns it (an api restriction, or a rule of a policy one uses) derives the
// state's next version in the same transaction.
//
// Rules of the wire contract these families follow:
//   - description and metadata over their limits (255 and 4096 bytes) are 400 ERR_NGROK_1421;
//   - a rule's cidr must be a normalised CIDR (1406 invalid, 1413 no mask, 1409 host bits set),
//     unique within its policy (1408); its action is allow or deny (1422) and cannot change;
//   - a rule's ip_policy_id must name a policy of the caller's account (1414);
//   - a policy used by a restriction cannot be deleted (1420); deleting one deletes its rules;
//   - a policy holds at most MaxRulesPerPolicy rules, and one with more than the rules a single
//     transaction can delete with it (maxCascade) is not deleted until some rules are (both
//     1411, the platform's per-policy rule limit);
//   - a restriction's type is dashboard, api, agent or endpoints and cannot change (214 on
//     update); its ip_policy_ids must list one to 50 policies of the account (215);
//   - a change that would make an enforced api restriction refuse the address it is made from
//     is refused with a 400 naming the field that caused it.
package access
