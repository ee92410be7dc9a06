package cost

// Prices is the price table of one region on one date: list prices in US dollars, without free
// tiers, from each service's pricing page. Edit this file (and its date) to price another region
// or another day.
var Prices = Table{
	Region: "us-east-1",
	Date:   "2025-06-01",
	// API Gateway HTTP API: per million requests (first 300 million a month), each 512 KB
	// counted as one request.
	HTTPAPIPerMillion: 1.00,
	// Lambda arm64: per million requests and per GB-second (first 7.5 billion GB-s a month).
	LambdaPerMillion:  0.20,
	LambdaPerGBSecond: 0.0000133334,
	// DynamoDB on-demand (standard table class): per million write and read request units.
	WriteUnitsPerMillion: 0.625,
	ReadUnitsPerMillion:  0.125,
	// SQS standard queue: per million requests (each 64 KB chunk one request).
	SQSPerMillion: 0.40,
	// EventBridge Pipes: per million requests entering a pipe after its filter (64 KB chunks).
	PipesPerMillion: 0.40,
	// KMS: per million requests (GenerateDataKey, Decrypt).
	KMSPerMillion: 3.00,
	// CloudWatch Logs: per GB ingested (standard log class).
	LogsIngestedPerGB: 0.50,
}

// Table is a price table (see Prices).
type Table struct {
	Region, Date                              string
	HTTPAPIPerMillion                         float64
	LambdaPerMillion, LambdaPerGBSecond       float64
	WriteUnitsPerMillion, ReadUnitsPerMillion float64
	SQSPerMillion, PipesPerMillion            float64
	KMSPerMillion                             float64
	LogsIngestedPerGB                         float64
}
