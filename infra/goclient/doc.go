// Package goclient drives the platform's official Go client (github.com/ngrok/ngrok-api-go/v8)
// against a running deployment. It is a module of its own, so that the project's go.mod never
// names the client: its go.mod replaces the client with the source shared/platform/api's
// TestOfficialGoClient unpacks from the client's reference archive into .local/, and that test
// runs this module's tests with the local stack's URL and an admin token in NGROK_API_BASE_URL and
// NGROK_API_KEY. Run alone, without them, the tests skip.
package goclient
