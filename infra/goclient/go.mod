module tunnelapi/infra/goclient

go 1.26

require github.com/ngrok/ngrok-api-go/v8 v8.0.0

// The official Go client's source, unpacked from its reference archive by shared/platform/api's
// TestOfficialGoClient, which runs this module's tests against the local stack.
replace github.com/ngrok/ngrok-api-go/v8 => ../../.local/clients/v8/ngrok-api-go
