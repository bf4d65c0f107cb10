package systemone

import (
	"strings"
	"testing"
)

func TestResolveBaseURL(t *testing.T) {
	cases := []struct {
		flag, env string
		want      string
		err       string
	}{
		{"", "", DefaultBaseURL, ""},
		{"", "https://gw.example.com/typesafe/", "https://gw.example.com/typesafe", ""},
		{"https://flag.example.com", "https://env.example.com", "https://flag.example.com", ""},
		{"HTTPS://api.typesafe.ai/", "", "https://api.typesafe.ai", ""},
		{"http://127.0.0.1:8089", "", "http://127.0.0.1:8089", ""},
		{"http://127.9.8.7:1/", "", "http://127.9.8.7:1", ""},
		{"http://[::1]:8089", "", "http://[::1]:8089", ""},
		{"http://localhost:8089", "", "http://localhost:8089", ""},
		{"http://LocalHost", "", "http://LocalHost", ""},
		{"", "http://127.0.0.1:9", "http://127.0.0.1:9", ""},
		{"http://api.typesafe.ai", "", "", "plain http to a non-loopback host"},
		{"http://10.0.0.5:8089", "", "", "plain http to a non-loopback host"},
		{"http://128.0.0.1", "", "", "plain http to a non-loopback host"},
		{"http://localhost.evil.com", "", "", "plain http to a non-loopback host"},
		{"http://[::2]:80", "", "", "plain http to a non-loopback host"},
		{"", "http://example.com", "", "$TYPESAFE_BASE_URL: "},
		{"ftp://api.typesafe.ai", "", "", "scheme must be https"},
		{"api.typesafe.ai", "", "", "has no host"},
		{"https://user:pw@api.typesafe.ai", "", "", "must not carry credentials"},
		{"https://api.typesafe.ai/?x=1", "", "", "must not have a query"},
		{"https://api.typesafe.ai/%zz", "", "", "does not parse"},
	}
	for _, tc := range cases {
		t.Run(tc.flag+"|"+tc.env, func(t *testing.T) {
			t.Setenv(EnvBaseURL, tc.env)
			got, err := ResolveBaseURL(tc.flag)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want error containing %q", got, err, tc.err)
				}
				if strings.Contains(err.Error(), "pw@") {
					t.Errorf("error echoes credentials: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestNewRefusesPlainHTTPElsewhere(t *testing.T) {
	if _, err := New(Config{BaseURL: "http://api.typesafe.ai", APIKey: fakeKey}); err == nil {
		t.Fatal("New accepted plain http to a public host")
	} else if strings.Contains(err.Error(), fakeKey) {
		t.Errorf("error leaks the key: %v", err)
	}
	c, err := New(Config{})
	if err != nil || c.BaseURL() != DefaultBaseURL {
		t.Fatalf("zero config: %v, %v", c, err)
	}
}
