package httpmodules

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/crewjam/saml/samlsp"

	"tunnelapi/shared/testing/samltest"
)

// libraryCheck is what CheckIdPMetadata did with the library: samlsp.ParseMetadata, then an
// IDPSSODescriptor with a single sign-on service location.
func libraryCheck(doc string) error {
	ed, err := samlsp.ParseMetadata([]byte(doc))
	if err != nil {
		return err
	}
	for _, idp := range ed.IDPSSODescriptors {
		for _, sso := range idp.SingleSignOnServices {
			if sso.Location != "" {
				return nil
			}
		}
	}
	return errors.New("the EntityDescriptor has no IDPSSODescriptor with a SingleSignOnService")
}

// agree fails t unless CheckIdPMetadata accepts doc when the library does and refuses it with
// the library's error otherwise; it reports whether doc was accepted.
func agree(t testing.TB, doc string) bool {
	t.Helper()
	want, got := libraryCheck(doc), CheckIdPMetadata(doc)
	if (want == nil) != (got == nil) || (want != nil && want.Error() != got.Error()) {
		t.Errorf("CheckIdPMetadata: %v, the library: %v, for\n%s", got, want, doc)
	}
	return want == nil
}

const mdNS = "urn:oasis:names:tc:SAML:2.0:metadata"

var (
	post     = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
	bindings = []string{post, "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect", "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact",
		"urn:oasis:names:tc:SAML:2.0:bindings:SOAP", "urn:oasis:names:tc:SAML:1.0:bindings:SOAP-binding", "urn:mace:shibboleth:1.0:profiles:AuthnRequest", ""}
	locations = []string{"https://idp.example.com/sso", "http://idp.example.com/sso", "ftp://idp.example.com/", "%zz", "", "relative/path", "https://[::1"}
	times     = []string{"2030-01-02T03:04:05Z", "2030-01-02T03:04:05.123456789+02:00", "2030-01-02T03:04:05.5", "2030-01-02T03:04:05", "", "tomorrow", "2030-13-01T00:00:00Z"}
	durations = []string{"PT1H", "P1Y2M3DT4H5M6.5S", "-P1D", "P", "PT", "3600", "", "x", "P1YT", "PT1.5.5S", "P99999999999999999999D", "PT1M1H"}
	numbers   = []string{"0", "7", "-1", "x", "", " 3 ", "99999999999999999999"}
	flags     = []string{"true", "false", "1", "maybe", ""}
)

// entity is an EntityDescriptor whose IdP has a single sign-on service at binding and location,
// with attrs on the descriptor, idpAttrs and idpChildren on the IdP and siblings after it.
func entity(attrs, idpAttrs, idpChildren, binding, location, siblings string) string {
	return fmt.Sprintf(`<EntityDescriptor xmlns="%s" entityID="https://idp.example.com/metadata"%s>`+
		`<IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"%s>%s`+
		`<SingleSignOnService Binding="%s" Location="%s"/></IDPSSODescriptor>%s</EntityDescriptor>`,
		mdNS, attrs, idpAttrs, idpChildren, binding, location, siblings)
}

// corpus is metadata varied one place at a time from a valid IdP's, then a few thousand
// documents with several places varied at once (a fixed seed: the same every run).
func corpus(t testing.TB) []string {
	docs := []string{samltest.IdPMetadata(t), "", "not xml", "<a/>", "<EntityDescriptor", `<EntityDescriptor xmlns="` + mdNS + `"/>`,
		`<EntityDescriptor/>`, `<EntitiesDescriptor/>`, `<EntityDescriptor xmlns="urn:other"/>`, `<x:EntitiesDescriptor xmlns:x="urn:other"/>`,
		`<EntitiesDescriptor xmlns="` + mdNS + `"></EntitiesDescriptor>`, entity("", "", "", post, locations[0], "") + "<trailing/>",
		`<!-- c --><?pi x?>` + entity("", "", "", post, locations[0], ""), `<EntityDescriptor xmlns="` + mdNS + `"><a:b xmlns:a="urn:a" a:c="d"/></EntityDescriptor>`}
	attr := func(name string, values []string) []string {
		out := []string{""}
		for _, v := range values {
			out = append(out, fmt.Sprintf(` %s="%s"`, name, v))
		}
		return out
	}
	endpoints := func(names []string, ns string, indexed bool) []string {
		var out []string
		for _, n := range names {
			for _, b := range bindings {
				for _, l := range locations {
					out = append(out, fmt.Sprintf(`<%s%s Binding="%s" Location="%s"/>`, n, ns, b, l))
					out = append(out, fmt.Sprintf(`<%s%s Binding="%s" Location="https://a.example/" ResponseLocation="%s"/>`, n, ns, b, l))
				}
			}
			if indexed {
				for _, v := range numbers {
					out = append(out, fmt.Sprintf(`<%s%s Binding="%s" Location="https://a.example/" index="%s"/>`, n, ns, post, v))
				}
				for _, v := range flags {
					out = append(out, fmt.Sprintf(`<%s%s Binding="%s" Location="https://a.example/" isDefault="%s"/>`, n, ns, post, v))
				}
			}
		}
		return out
	}
	role := func(name, inner string) []string {
		var out []string
		for _, a := range append(attr("validUntil", times), attr("cacheDuration", append(durations, numbers...))...) {
			out = append(out, fmt.Sprintf(`<%s%s>%s</%s>`, name, a, inner, name))
		}
		return out
	}
	other := ` xmlns="urn:other"`
	entityAttrs := append(attr("validUntil", times), attr("cacheDuration", durations)...)
	idpAttrs := append(append(attr("validUntil", times), attr("cacheDuration", append(durations, numbers...))...), attr("WantAuthnRequestsSigned", flags)...)
	var idpChildren []string
	for _, ns := range []string{"", other} {
		idpChildren = append(idpChildren, endpoints([]string{"SingleLogoutService", "ManageNameIDService", "NameIDMappingService", "AssertionIDRequestService"}, ns, false)...)
		idpChildren = append(idpChildren, endpoints([]string{"ArtifactResolutionService"}, ns, true)...)
	}
	idpChildren = append(idpChildren, `<KeyDescriptor use="signing"><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>MII</X509Certificate></X509Data></KeyInfo></KeyDescriptor>`,
		`<KeyDescriptor><KeyInfo><X509Data xmlns="urn:other"/></KeyInfo></KeyDescriptor>`, `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><Child/><Attr><Key>k</Key></Attr></Signature>`,
		`<Organization><OrganizationName xml:lang="en">x</OrganizationName></Organization>`, `<Attribute Name="a"><AttributeValue>v</AttributeValue></Attribute>`)
	var siblings []string
	for _, ns := range []string{"", other} {
		for _, e := range endpoints([]string{"AssertionConsumerService", "ArtifactResolutionService"}, ns, true) {
			siblings = append(siblings, `<SPSSODescriptor>`+e+`</SPSSODescriptor>`)
		}
		for _, e := range endpoints([]string{"SingleLogoutService"}, ns, false) {
			siblings = append(siblings, `<SPSSODescriptor>`+e+`</SPSSODescriptor>`, `<AuthnAuthorityDescriptor>`+e+`</AuthnAuthorityDescriptor>`)
		}
		for _, n := range []string{"AuthnAuthorityDescriptor:AuthnQueryService", "PDPDescriptor:AuthzService", "AttributeAuthorityDescriptor:AttributeService",
			"PDPDescriptor:AssertionIDRequestService", "AttributeAuthorityDescriptor:AssertionIDRequestService"} {
			parent, child, _ := strings.Cut(n, ":")
			for _, e := range endpoints([]string{child}, ns, false) {
				siblings = append(siblings, `<`+parent+`>`+e+`</`+parent+`>`)
			}
		}
	}
	for _, a := range append(append(attr("AuthnRequestsSigned", flags), attr("WantAssertionsSigned", flags)...), attr("validUntil", times)...) {
		siblings = append(siblings, `<SPSSODescriptor`+a+`/>`)
	}
	for _, a := range append(attr("index", numbers), attr("isDefault", flags)...) {
		siblings = append(siblings, `<SPSSODescriptor><AttributeConsumingService`+a+`/></SPSSODescriptor>`)
	}
	for _, a := range attr("isRequired", flags) {
		siblings = append(siblings, `<SPSSODescriptor><AttributeConsumingService index="1"><RequestedAttribute Name="n"`+a+`/></AttributeConsumingService></SPSSODescriptor>`)
	}
	for _, n := range []string{"RoleDescriptor", "AuthnAuthorityDescriptor", "PDPDescriptor", "AttributeAuthorityDescriptor", "AffiliationDescriptor"} {
		siblings = append(siblings, role(n, "")...)
		siblings = append(siblings, role(n+other, "")...)
	}
	siblings = append(siblings, `<AffiliationDescriptor affiliationOwnerID="o"><AffiliateMember>m</AffiliateMember></AffiliationDescriptor>`)

	good := locations[0]
	for _, a := range entityAttrs {
		docs = append(docs, entity(a, "", "", post, good, ""))
	}
	for _, a := range idpAttrs {
		docs = append(docs, entity("", a, "", post, good, ""))
	}
	for _, c := range idpChildren {
		docs = append(docs, entity("", "", c, post, good, ""))
	}
	for _, b := range bindings {
		for _, l := range locations {
			docs = append(docs, entity("", "", "", b, l, ""))
		}
	}
	for _, s := range siblings {
		docs = append(docs, entity("", "", "", post, good, s))
	}
	// Roots of the other name: an EntitiesDescriptor (its attributes, nested ones, which entity
	// is read) and a document of another namespace.
	idp, sp := entity("", "", "", post, good, ""), `<EntityDescriptor entityID="sp"><SPSSODescriptor/></EntityDescriptor>`
	for _, a := range append(entityAttrs, ` xmlns:o="urn:other" o:validUntil="x"`) {
		for _, inner := range []string{idp, sp + idp, sp, "", `<EntitiesDescriptor>` + idp + `</EntitiesDescriptor>`,
			`<EntitiesDescriptor` + a + `>` + idp + `</EntitiesDescriptor>` + idp, entity("", "", "", post, "ftp://x", "") + idp,
			`<EntitiesDescriptor><EntitiesDescriptor` + a + `/></EntitiesDescriptor>` + idp, `<o:EntityDescriptor xmlns:o="urn:other"/>` + idp} {
			docs = append(docs, `<EntitiesDescriptor xmlns="`+mdNS+`"`+a+`>`+inner+`</EntitiesDescriptor>`)
		}
	}
	docs = append(docs, `<EntitiesDescriptor xmlns="urn:other">`+idp+`</EntitiesDescriptor>`, `<o:EntityDescriptor xmlns:o="urn:other"/>`,
		`<EntityDescriptor xmlns="`+mdNS+`"><o:IDPSSODescriptor xmlns:o="urn:other"><o:SingleSignOnService Binding="`+post+`" Location="ftp://x"/></o:IDPSSODescriptor></EntityDescriptor>`)

	// Several places at once.
	r := rand.New(rand.NewPCG(40, 1))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	for range 3000 {
		d := entity(pick(entityAttrs), pick(idpAttrs), pick(idpChildren)+pick(idpChildren), pick(bindings), pick(locations), pick(siblings)+pick(siblings))
		if r.IntN(4) == 0 {
			d = `<EntitiesDescriptor xmlns="` + mdNS + `"` + pick(entityAttrs) + `>` + pick([]string{sp, ""}) + d + `</EntitiesDescriptor>`
		}
		docs = append(docs, d)
	}
	return docs
}

// CheckIdPMetadata accepts what the library accepts and refuses the rest with its error: on
// metadata varied in every attribute that parses into a time, duration, number or flag, every
// endpoint's binding and locations, namespaces, roots and wrappers.
func TestIdPMetadataAgreesWithTheLibrary(t *testing.T) {
	docs := corpus(t)
	accepted := 0
	for _, d := range docs {
		if agree(t, d) {
			accepted++
		}
	}
	// Both outcomes are well represented, so agreement is not agreement on one answer.
	t.Logf("%d documents, %d accepted", len(docs), accepted)
	if accepted < len(docs)/10 || accepted > len(docs)*9/10 {
		t.Errorf("%d of %d documents accepted: the corpus does not exercise both outcomes", accepted, len(docs))
	}
}

// FuzzIdPMetadataAgreesWithTheLibrary holds CheckIdPMetadata to the library on any document.
func FuzzIdPMetadataAgreesWithTheLibrary(f *testing.F) {
	for i, d := range corpus(f) {
		if i%7 == 0 {
			f.Add(d)
		}
	}
	f.Fuzz(func(t *testing.T, doc string) { agree(t, doc) })
}
