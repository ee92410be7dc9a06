package httpmodules

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	xrv "github.com/mattermost/xml-roundtrip-validator"
)

// CheckIdPMetadata validates an IdP's metadata as crewjam/saml's samlsp.ParseMetadata parses it
// (with the same errors), and requires an IDPSSODescriptor with a single sign-on service: the
// document survives an XML round trip; its root is an EntityDescriptor, or an
// EntitiesDescriptor whose first EntityDescriptor with an IDPSSODescriptor is the one read; its
// times and xsd durations parse, its indexes and flags are numbers and booleans, and every
// endpoint of a known binding is at an http or https URL (one of another binding counts as no
// location).
//
// The types below are the library's metadata types less the members that cannot refuse a
// document (strings, and elements made only of strings): the same nesting, names and Go
// types, so encoding/xml matches and parses what the library's do. The library itself is not
// linked: its package initialisation (templates, XML signature and encryption) would be paid at
// every cold start of the function. TestIdPMetadataAgreesWithTheLibrary holds this to it.
func CheckIdPMetadata(doc string) error {
	ed, err := parseMetadata([]byte(doc))
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

// parseMetadata is samlsp.ParseMetadata over the types below.
func parseMetadata(data []byte) (*entityDescriptor, error) {
	if err := xrv.Validate(bytes.NewBuffer(data)); err != nil {
		return nil, err
	}
	entity := &entityDescriptor{}
	err := xml.Unmarshal(data, entity)
	// encoding/xml's wording for a root of the other name, as the library compares it.
	if err != nil && err.Error() == "expected element type <EntityDescriptor> but have <EntitiesDescriptor>" {
		entities := &entitiesDescriptor{}
		if err := xml.Unmarshal(data, entities); err != nil {
			return nil, err
		}
		for i, e := range entities.EntityDescriptors {
			if len(e.IDPSSODescriptors) > 0 {
				return &entities.EntityDescriptors[i], nil
			}
		}
		return nil, errors.New("no entity found with IDPSSODescriptor")
	}
	if err != nil {
		return nil, err
	}
	return entity, nil
}

type entitiesDescriptor struct {
	XMLName             xml.Name             `xml:"urn:oasis:names:tc:SAML:2.0:metadata EntitiesDescriptor"`
	ValidUntil          *relaxedTime         `xml:"validUntil,attr,omitempty"`
	CacheDuration       *xsdDuration         `xml:"cacheDuration,attr,omitempty"`
	EntitiesDescriptors []entitiesDescriptor `xml:"urn:oasis:names:tc:SAML:2.0:metadata EntitiesDescriptor"`
	EntityDescriptors   []entityDescriptor   `xml:"urn:oasis:names:tc:SAML:2.0:metadata EntityDescriptor"`
}

// entityDescriptor's element members take the metadata namespace from its XMLName, as the
// library's do (they are declared after it).
type entityDescriptor struct {
	XMLName                       xml.Name                       `xml:"urn:oasis:names:tc:SAML:2.0:metadata EntityDescriptor"`
	ValidUntil                    relaxedTime                    `xml:"validUntil,attr,omitempty"`
	CacheDuration                 xsdDuration                    `xml:"cacheDuration,attr,omitempty"`
	RoleDescriptors               []roleDescriptor               `xml:"RoleDescriptor"`
	IDPSSODescriptors             []idpSSODescriptor             `xml:"IDPSSODescriptor"`
	SPSSODescriptors              []spSSODescriptor              `xml:"SPSSODescriptor"`
	AuthnAuthorityDescriptors     []authnAuthorityDescriptor     `xml:"AuthnAuthorityDescriptor"`
	AttributeAuthorityDescriptors []attributeAuthorityDescriptor `xml:"AttributeAuthorityDescriptor"`
	PDPDescriptors                []pdpDescriptor                `xml:"PDPDescriptor"`
	AffiliationDescriptor         *affiliationDescriptor
}

type roleDescriptor struct {
	ValidUntil    *time.Time    `xml:"validUntil,attr,omitempty"`
	CacheDuration time.Duration `xml:"cacheDuration,attr,omitempty"`
}

// ssoDescriptor is embedded, without an XMLName, so its members match in any namespace.
type ssoDescriptor struct {
	roleDescriptor
	ArtifactResolutionServices []indexedEndpoint `xml:"ArtifactResolutionService"`
	SingleLogoutServices       []endpoint        `xml:"SingleLogoutService"`
	ManageNameIDServices       []endpoint        `xml:"ManageNameIDService"`
}

// idpSSODescriptor's own ArtifactResolutionServices (endpoints, in the metadata namespace)
// hide ssoDescriptor's, as in the library.
type idpSSODescriptor struct {
	XMLName xml.Name `xml:"urn:oasis:names:tc:SAML:2.0:metadata IDPSSODescriptor"`
	ssoDescriptor
	WantAuthnRequestsSigned    *bool      `xml:",attr"`
	SingleSignOnServices       []endpoint `xml:"SingleSignOnService"`
	ArtifactResolutionServices []endpoint `xml:"ArtifactResolutionService"`
	NameIDMappingServices      []endpoint `xml:"NameIDMappingService"`
	AssertionIDRequestServices []endpoint `xml:"AssertionIDRequestService"`
}

type spSSODescriptor struct {
	XMLName xml.Name `xml:"urn:oasis:names:tc:SAML:2.0:metadata SPSSODescriptor"`
	ssoDescriptor
	AuthnRequestsSigned        *bool                       `xml:",attr"`
	WantAssertionsSigned       *bool                       `xml:",attr"`
	AssertionConsumerServices  []indexedEndpoint           `xml:"AssertionConsumerService"`
	AttributeConsumingServices []attributeConsumingService `xml:"AttributeConsumingService"`
}

type attributeConsumingService struct {
	Index               int                  `xml:"index,attr"`
	IsDefault           *bool                `xml:"isDefault,attr"`
	RequestedAttributes []requestedAttribute `xml:"RequestedAttribute"`
}

type requestedAttribute struct {
	IsRequired *bool `xml:"isRequired,attr"`
}

type authnAuthorityDescriptor struct {
	roleDescriptor
	AuthnQueryServices         []endpoint `xml:"AuthnQueryService"`
	AssertionIDRequestServices []endpoint `xml:"AssertionIDRequestService"`
}

type pdpDescriptor struct {
	roleDescriptor
	AuthzServices              []endpoint `xml:"AuthzService"`
	AssertionIDRequestServices []endpoint `xml:"AssertionIDRequestService"`
}

type attributeAuthorityDescriptor struct {
	roleDescriptor
	AttributeServices          []endpoint `xml:"AttributeService"`
	AssertionIDRequestServices []endpoint `xml:"AssertionIDRequestService"`
}

type affiliationDescriptor struct {
	ValidUntil    time.Time     `xml:"validUntil,attr,omitempty"`
	CacheDuration time.Duration `xml:"cacheDuration,attr"`
}

// The bindings whose endpoint locations must be http or https URLs.
const (
	httpPostBinding     = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
	httpRedirectBinding = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
	httpArtifactBinding = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact"
	soapBinding         = "urn:oasis:names:tc:SAML:2.0:bindings:SOAP"
	soapBindingV1       = "urn:oasis:names:tc:SAML:1.0:bindings:SOAP-binding"
)

// checkEndpointLocation returns location when binding is known and location is an http or https
// URL, "" for another binding (whose location syntax is unknown).
func checkEndpointLocation(binding string, location string) (string, error) {
	switch binding {
	case httpPostBinding, httpRedirectBinding, httpArtifactBinding, soapBinding, soapBindingV1:
		u, err := url.Parse(location)
		if err != nil {
			return "", fmt.Errorf("invalid url %q: %w", location, err)
		}
		switch u.Scheme {
		case "http", "https":
		default:
			return "", fmt.Errorf("invalid url scheme %q for binding %q", u.Scheme, binding)
		}
	default:
		location = ""
	}
	return location, nil
}

type endpoint struct {
	Binding          string `xml:"Binding,attr"`
	Location         string `xml:"Location,attr"`
	ResponseLocation string `xml:"ResponseLocation,attr,omitempty"`
}

// UnmarshalXML decodes the endpoint, then checks its locations.
func (m *endpoint) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain endpoint
	if err := d.DecodeElement((*plain)(m), &start); err != nil {
		return err
	}
	var err error
	if m.Location, err = checkEndpointLocation(m.Binding, m.Location); err != nil {
		return err
	}
	if m.ResponseLocation != "" {
		if m.ResponseLocation, err = checkEndpointLocation(m.Binding, m.ResponseLocation); err != nil {
			return err
		}
	}
	return nil
}

type indexedEndpoint struct {
	Binding          string  `xml:"Binding,attr"`
	Location         string  `xml:"Location,attr"`
	ResponseLocation *string `xml:"ResponseLocation,attr,omitempty"`
	Index            int     `xml:"index,attr"`
	IsDefault        *bool   `xml:"isDefault,attr"`
}

// UnmarshalXML decodes the endpoint, then checks its locations.
func (m *indexedEndpoint) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain indexedEndpoint
	if err := d.DecodeElement((*plain)(m), &start); err != nil {
		return err
	}
	var err error
	if m.Location, err = checkEndpointLocation(m.Binding, m.Location); err != nil {
		return err
	}
	if m.ResponseLocation != nil {
		if _, err := checkEndpointLocation(m.Binding, *m.ResponseLocation); err != nil {
			return err
		}
	}
	return nil
}

// relaxedTime is a time in the forms SAML documents use: RFC 3339, with or without fractions
// of a second, or without a zone.
type relaxedTime time.Time

// UnmarshalText parses text, leaving the zero time for an empty one; the error is RFC 3339's.
func (m *relaxedTime) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*m = relaxedTime(time.Time{})
		return nil
	}
	t, err := time.Parse(time.RFC3339, string(text))
	if err == nil {
		*m = relaxedTime(t.Round(time.Millisecond))
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err2 := time.Parse(layout, string(text)); err2 == nil {
			*m = relaxedTime(t.Round(time.Millisecond))
			return nil
		}
	}
	return err
}

// xsdDuration is an xsd:duration (PnYnMnDTnHnMnS; a month is 30 days, a year 365).
type xsdDuration time.Duration

// The xsd:duration forms, compiled by the first document that has one.
var (
	durationRegexp     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-?)P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(.+))?$`) })
	durationTimeRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$`) })
)

// UnmarshalText parses an xsd:duration.
func (d *xsdDuration) UnmarshalText(text []byte) error {
	if text == nil {
		*d = 0
		return nil
	}
	const day = 24 * time.Hour
	match := durationRegexp().FindStringSubmatch(string(text))
	if match == nil || strings.Join(match[2:6], "") == "" {
		return fmt.Errorf("invalid duration (%s)", text)
	}
	var out time.Duration
	for i, part := range []struct {
		name string
		unit time.Duration
	}{{"years", 365 * day}, {"months", 30 * day}, {"days", day}} {
		if s := match[2+i]; s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("invalid duration %s (%s): %s", part.name, text, err)
			}
			out += time.Duration(n) * part.unit
		}
	}
	if match[5] != "" {
		tm := durationTimeRegexp().FindStringSubmatch(match[5])
		if tm == nil {
			return fmt.Errorf("invalid duration (%s)", text)
		}
		for i, part := range []struct {
			name string
			unit time.Duration
		}{{"hours", time.Hour}, {"minutes", time.Minute}} {
			if s := tm[1+i]; s != "" {
				n, err := strconv.Atoi(s)
				if err != nil {
					return fmt.Errorf("invalid duration %s (%s): %s", part.name, text, err)
				}
				out += time.Duration(n) * part.unit
			}
		}
		if tm[3] != "" {
			s, err := strconv.ParseFloat(tm[3], 64)
			if err != nil {
				return fmt.Errorf("invalid duration seconds (%s): %s", text, err)
			}
			out += time.Duration(s * float64(time.Second))
		}
	}
	if match[1] == "-" {
		out = -out
	}
	*d = xsdDuration(out)
	return nil
}
