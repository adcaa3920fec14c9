package explore

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
)

var (
	//go:embed assets/page.html
	pageHTML string
	//go:embed assets/app.js
	appJS string
	//go:embed assets/style.css
	styleCSS string
)

// Page modes: a report file embeds its data; a served page fetches it.
const (
	modeFile  = "file"
	modeServe = "serve"
)

// page fills the page template; data is the embedded data blocks (empty
// when served).
func page(title, mode, data string) string {
	// The script and style are the package's own assets; only the title
	// comes from the store, and it is escaped.
	r := strings.NewReplacer("{{TITLE}}", html.EscapeString(title), "{{MODE}}", mode, "{{CSS}}", styleCSS,
		"{{JS}}", strings.ReplaceAll(appJS, "</script", `<\/script`), "{{DATA}}", data)
	return r.Replace(pageHTML)
}

// gzipBase64 encodes v as JSON, gzips it and writes it base64-encoded: the
// form of a report file's data blocks (DecompressionStream reads them).
func gzipBase64(w io.Writer, v any) error {
	enc := base64.NewEncoder(base64.StdEncoding, w)
	zw, err := gzip.NewWriterLevel(enc, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return enc.Close()
}

// WriteHTML writes the self-contained report: the page, its script and
// style, the View, and one data block per functionality with its CaseSet,
// each gzipped JSON in base64, decoded by the page only when shown.
func (s *Source) WriteHTML(w io.Writer) error {
	var data bytes.Buffer
	block := func(id string, v any) error {
		fmt.Fprintf(&data, "<script type=\"application/octet-stream\" id=%q>", id)
		if err := gzipBase64(&data, v); err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		data.WriteString("</script>\n")
		return nil
	}
	if err := block("beluga-view", s.View); err != nil {
		return err
	}
	for fid := range s.View.Funcs {
		cs, err := s.Cases(fid)
		if err != nil {
			return fmt.Errorf("functionality %q: %w", s.View.Funcs[fid].Name, err)
		}
		if err := block(fmt.Sprintf("beluga-cases-%d", fid), cs); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, page(s.View.Title, modeFile, data.String()))
	return err
}
