package auth

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/store"
)

// fill sets every field of the struct v points to (embedded ones included) to a value of its own,
// so a field the hand-written decoders miss, or read under another name, shows as a difference.
func fill(t *testing.T, v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("value of " + v.Type().Field(i).Name)
		case reflect.Int64:
			f.SetInt(int64(1000 + i))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"one " + v.Type().Field(i).Name, "two"}))
		case reflect.Struct:
			fill(t, f)
		default:
			t.Fatalf("fill: field %s of kind %s", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestDecodersAgreeWithUnmarshal: decodeToken and decodeAccount, which VerifyRead uses instead
// of store.Unmarshal, decode every item Unmarshal decodes into the same value, and refuse an
// attribute of the wrong type as it does.
func TestDecodersAgreeWithUnmarshal(t *testing.T) {
	check := func(t *testing.T, name string, item store.Item, want any, decode func(store.Item) (any, error)) {
		t.Helper()
		got, err := decode(item)
		uerr := store.Unmarshal(item, want)
		if (err != nil) != (uerr != nil) {
			t.Fatalf("%s: decoder error %v, Unmarshal error %v", name, err, uerr)
		}
		if err == nil && !reflect.DeepEqual(got, reflect.ValueOf(want).Elem().Interface()) {
			t.Errorf("%s: decoded %+v, Unmarshal %+v", name, got, reflect.ValueOf(want).Elem().Interface())
		}
	}
	variants := func(t *testing.T, full any, newOut func() any, decode func(store.Item) (any, error)) {
		fill(t, reflect.ValueOf(full).Elem())
		item, err := attributevalue.MarshalMap(full)
		if err != nil {
			t.Fatal(err)
		}
		check(t, "every field set", item, newOut(), decode)
		zero, err := attributevalue.MarshalMap(newOut())
		if err != nil {
			t.Fatal(err)
		}
		check(t, "zero item", zero, newOut(), decode)
		for name, v := range item {
			without := store.Item{}
			null := store.Item{}
			wrong := store.Item{}
			for n, w := range item {
				if n != name {
					without[n], null[n], wrong[n] = w, w, w
				}
			}
			null[name] = &types.AttributeValueMemberNULL{Value: true}
			wrong[name] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}
			check(t, "without "+name, without, newOut(), decode)
			check(t, "NULL "+name, null, newOut(), decode)
			check(t, "map as "+name, wrong, newOut(), decode)
			if ss, ok := v.(*types.AttributeValueMemberSS); ok {
				list := store.Item{}
				for n, w := range item {
					list[n] = w
				}
				l := &types.AttributeValueMemberL{}
				for _, s := range ss.Value {
					l.Value = append(l.Value, &types.AttributeValueMemberS{Value: s})
				}
				list[name] = l
				check(t, "list as "+name, list, newOut(), decode)
			}
		}
	}
	t.Run("token", func(t *testing.T) {
		variants(t, &TokenItem{}, func() any { return &TokenItem{} }, func(it store.Item) (any, error) { return decodeToken(it) })
	})
	t.Run("account", func(t *testing.T) {
		variants(t, &AccountItem{}, func() any { return &AccountItem{} }, func(it store.Item) (any, error) { return decodeAccount(it) })
	})
}
