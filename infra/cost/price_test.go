package cost_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"tunnelapi/infra/cost"
)

// PerMillion adds each service's share by the table's prices: here every price is a distinct
// power of two, so a share counted twice, left out or priced by another's rate changes the sum.
func TestPerMillionPricesEachService(t *testing.T) {
	tbl := cost.Table{HTTPAPIPerMillion: 1, LambdaPerMillion: 2, LambdaPerGBSecond: 4e-6, ReadUnitsPerMillion: 8,
		WriteUnitsPerMillion: 16, SQSPerMillion: 32, PipesPerMillion: 64, KMSPerMillion: 128, LogsIngestedPerGB: 256}
	u := cost.Usage{HTTP: true, Invocations: 0.5, Lambda: 1500*time.Microsecond + time.Nanosecond, MemoryMB: 512,
		ReadUnits: 3, WriteUnits: 5, SQS: 1.5, Pipes: 1, KMS: 0.25,
		LogBytes: 125, UsageInvocations: 0.25, UsageLambda: 3 * time.Millisecond, UsageMemoryMB: 1024}
	// Half an invocation of 2 billed ms (1.5 ms rounds up) at half a GB: 0.0005 GB-s; a quarter
	// of the usage worker's of 3 ms at 1 GB: 0.00075 GB-s; a million usage lines of 125 bytes:
	// 0.125 GB.
	want := 1 + 0.5*2 + 0.5*0.5*0.002*4e-6*1e6 + 3*8 + 5*16 + 1.5*32 + 64 + 0.25*128 +
		0.25*2 + 0.25*1*0.003*4e-6*1e6 + 0.125*256
	if got := tbl.PerMillion(u); math.Abs(got-want) > 1e-9 {
		t.Errorf("PerMillion = %v, want %v", got, want)
	}
	u.HTTP = false
	if got := tbl.PerMillion(u); math.Abs(got-(want-1)) > 1e-9 {
		t.Errorf("without API Gateway: PerMillion = %v, want %v", got, want-1)
	}
	var out strings.Builder
	tbl.Print(&out, []cost.Usage{{Kind: "a kind", Invocations: 1}})
	if !strings.Contains(out.String(), "a kind") || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("Print wrote %q, want a title, a header and one row", out.String())
	}
}

// A GET's floor is API Gateway, one invocation of its duration and its read units, nothing
// else; the line beside it says both prices and their ratio.
func TestFloor(t *testing.T) {
	tbl := cost.Table{HTTPAPIPerMillion: 1, LambdaPerMillion: 2, LambdaPerGBSecond: 4e-6, ReadUnitsPerMillion: 8, WriteUnitsPerMillion: 16}
	floor := cost.Floor(2*time.Millisecond, 1024, 1)
	// 1 + 2 + a million invocations of 0.002 GB-s + one read unit.
	if got, want := tbl.PerMillion(floor), 1+2+0.002*4e-6*1e6+8; math.Abs(got-want) > 1e-9 {
		t.Errorf("floor = %v, want %v", got, want)
	}
	get := floor
	get.Kind, get.WriteUnits = "a get", 0.5 // 8 more: 19.008 against 11.008
	var out strings.Builder
	tbl.PrintVersusFloor(&out, get, floor)
	if want := "a get: $19.01 per million, 1.73x its floor $11.01 (API Gateway, one invocation of 2.0ms, 1.0 read units)\n"; out.String() != want {
		t.Errorf("PrintVersusFloor wrote %q, want %q", out.String(), want)
	}
}
