package httpsedges_test

import (
	"net/http"
	"testing"

	"tunnelapi/shared/testing/samltest"
	"tunnelapi/shared/testing/testkit"
)

// Members as the platform's recorded responses carry them, where they differed once.

func TestSAMLModuleIdPMetadataURL(t *testing.T) {
	_, a := suite.AppAccount(t)
	edge := a.Do(t, "POST", "/edges/https", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	route := a.Do(t, "POST", "/edges/https/"+edge+"/routes", map[string]any{"match_type": "path_prefix", "match": "/",
		"saml": map[string]any{"idp_metadata": samltest.IdPMetadata(t)}}).Expect(t, http.StatusCreated)
	saml, _ := route["saml"].(map[string]any)
	testkit.WantMember(t, "saml module", saml, "idp_metadata_url", "")
}
