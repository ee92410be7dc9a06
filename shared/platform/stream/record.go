package stream

import (
	"encoding/base64"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Event is a stream record in the JSON shape filters and templates see (the package doc).
func Event(r types.Record) map[string]any {
	ev := map[string]any{
		"eventID":      aws.ToString(r.EventID),
		"eventName":    string(r.EventName),
		"eventVersion": aws.ToString(r.EventVersion),
		"eventSource":  aws.ToString(r.EventSource),
		"awsRegion":    aws.ToString(r.AwsRegion),
	}
	if r.UserIdentity != nil {
		ev["userIdentity"] = map[string]any{"type": aws.ToString(r.UserIdentity.Type), "principalId": aws.ToString(r.UserIdentity.PrincipalId)}
	}
	if d := r.Dynamodb; d != nil {
		sr := map[string]any{
			"SequenceNumber": aws.ToString(d.SequenceNumber),
			"StreamViewType": string(d.StreamViewType),
		}
		if d.SizeBytes != nil {
			sr["SizeBytes"] = float64(*d.SizeBytes)
		}
		if d.ApproximateCreationDateTime != nil {
			sr["ApproximateCreationDateTime"] = float64(d.ApproximateCreationDateTime.Truncate(time.Second).Unix())
		}
		for name, img := range map[string]map[string]types.AttributeValue{"Keys": d.Keys, "NewImage": d.NewImage, "OldImage": d.OldImage} {
			if img != nil {
				sr[name] = image(img)
			}
		}
		ev["dynamodb"] = sr
	}
	return ev
}

func image(m map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = attr(v)
	}
	return out
}

// attr is one attribute value in DynamoDB's JSON form.
func attr(v types.AttributeValue) map[string]any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": stringList(v.Value)}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": stringList(v.Value)}
	case *types.AttributeValueMemberBS:
		l := make([]any, len(v.Value))
		for i, b := range v.Value {
			l[i] = base64.StdEncoding.EncodeToString(b)
		}
		return map[string]any{"BS": l}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, x := range v.Value {
			l[i] = attr(x)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": image(v.Value)}
	}
	return map[string]any{}
}

func stringList(ss []string) []any {
	l := make([]any, len(ss))
	for i, s := range ss {
		l[i] = s
	}
	return l
}
