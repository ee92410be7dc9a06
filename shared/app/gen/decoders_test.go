package main

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/store"
)

// fill sets every exported field v holds, in embedded and nested structs, pointers, slices and
// maps too, to a value of its own (strings and numbers distinct, booleans true), so that a field
// a decoder misses or mixes up shows.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString("v" + strconv.Itoa(*n))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Uint8:
		v.SetUint(uint64(*n % 256))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(t, v.Index(0), n)
		fill(t, v.Index(1), n)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, key, n)
		fill(t, val, n)
		v.SetMapIndex(key, val)
	case reflect.Interface:
	default:
		t.Fatalf("fill: a %s: teach fill its kind", v.Type())
	}
}

// Every family item type in shared/families has a generated decoder (but for those the
// generator leaves to Unmarshal, named here), and it decodes as store.Unmarshal does: an item
// with every field set, one with none, one with numbers where strings belong, and a string
// where a number belongs an error.
func TestGeneratedDecodersDecodeAsUnmarshal(t *testing.T) {
	decoded := 0
	for _, d := range app.Families {
		typ := d.Binding().ItemType()
		if _, ok := reflect.New(typ).Interface().(store.Decoder); !ok {
			t.Errorf("%s: its item %s has no generated decoder", d.Path, typ)
			continue
		}
		decoded++
		full := reflect.New(typ)
		n := 0
		fill(t, full.Elem(), &n)
		for _, want := range []reflect.Value{full, reflect.New(typ)} {
			it, err := attributevalue.MarshalMap(want.Interface())
			if err != nil {
				t.Fatal(err)
			}
			direct, reflected := reflect.New(typ), reflect.New(typ)
			if err := store.Decode(it, direct.Interface()); err != nil {
				t.Errorf("%s: %v", typ, err)
			}
			if err := store.Unmarshal(it, reflected.Interface()); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(direct.Interface(), reflected.Interface()) {
				t.Errorf("%s decoded directly\n%+v\nby Unmarshal\n%+v", typ, direct.Elem(), reflected.Elem())
			}
		}
		// Attributes of other types than the fields' own are decoded as Unmarshal decodes them:
		// a number into a string, in a list of strings too.
		it, _ := attributevalue.MarshalMap(full.Interface())
		for name, v := range it {
			switch v := v.(type) {
			case *types.AttributeValueMemberS:
				it[name] = &types.AttributeValueMemberN{Value: "7"}
			case *types.AttributeValueMemberL:
				if len(v.Value) > 0 {
					if _, ok := v.Value[0].(*types.AttributeValueMemberS); ok {
						it[name] = &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "8"}}}
					}
				}
			}
		}
		direct, reflected := reflect.New(typ), reflect.New(typ)
		derr, rerr := store.Decode(it, direct.Interface()), store.Unmarshal(it, reflected.Interface())
		if (derr == nil) != (rerr == nil) || !reflect.DeepEqual(direct.Interface(), reflected.Interface()) {
			t.Errorf("%s with numbers for strings decoded directly (%v)\n%+v\nby Unmarshal (%v)\n%+v", typ, derr, direct.Elem(), rerr, reflected.Elem())
		}
		it, _ = attributevalue.MarshalMap(full.Interface())
		it["created"] = &types.AttributeValueMemberS{Value: "soon"}
		if err := store.Decode(it, reflect.New(typ).Interface()); err == nil {
			t.Errorf("%s: a string where created's number belongs decoded without an error", typ)
		}
	}
	if decoded < 20 {
		t.Fatalf("only %d item types have decoders: the check would prove little", decoded)
	}
}
