package report

import (
	"html/template"
	"strings"
	"testing"
)

// escapeHTML writes what html/template writes for a value in an element's
// text and in a quoted attribute, which is how pages were written before
// the package put them together itself (and what the viewer matches).
func TestEscapeHTMLAsTemplate(t *testing.T) {
	tmpl := template.Must(template.New("").Parse(`<title>{{.}}</title><meta content="{{.}}"><p>{{.}}</p>`))
	for _, s := range []string{
		"", "plain · text", `a<b>&"c'+d`, "nul\x00here", "bad \xff utf-8", "\ufdd0\ufffe noncharacters", "</title><script>x</script>",
		"default-src 'none'; style-src 'sha256-ab+c/d='",
	} {
		var b strings.Builder
		if err := tmpl.Execute(&b, s); err != nil {
			t.Fatal(err)
		}
		e := escapeHTML(s)
		if want := "<title>" + e + "</title><meta content=\"" + e + "\"><p>" + e + "</p>"; b.String() != want {
			t.Errorf("%q:\ntemplate %q\nescapeHTML %q", s, b.String(), want)
		}
	}
}

func TestPageHead(t *testing.T) {
	var b strings.Builder
	if err := writeHead(&b, `agenteval · <b>"x"</b>`); err != nil {
		t.Fatal(err)
	}
	head := b.String()
	for _, want := range []string{
		"<!doctype html>\n<html lang=\"en\">\n<head>\n",
		MetaCSP(CSP()) + "\n",
		"<title>agenteval · &lt;b&gt;&#34;x&#34;&lt;/b&gt;</title>\n",
		"<style>" + reportCSS + "</style>\n</head>\n<body>\n",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("the head has no %.80q", want)
		}
	}
	if !strings.HasPrefix(MetaCSP(CSP()), `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;sha256-`) {
		t.Errorf("MetaCSP = %s", MetaCSP(CSP()))
	}
}
