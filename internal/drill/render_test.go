package drill

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func renderTestReport() *Report {
	r := &Report{Fault: "partition-master", Rounds: 1, Clients: 3, Duration: 10 * time.Second}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for c := 0; c < 3; c++ {
		for i := 0; i < 40; i++ {
			r.History = append(r.History, Op{Client: c, Kind: KindWrite, Key: fmt.Sprintf("k%d-%d", c, i), Value: "v",
				Invoke: ms(i * 250), Done: ms(i*250 + 20), Status: StatusOK, Acked: true})
		}
	}
	// Client 1's writes acknowledged between 3 s and 4 s were lost.
	for i := 12; i <= 16; i++ {
		r.Loss.Lost = append(r.Loss.Lost, LostWrite{Key: fmt.Sprintf("k1-%d", i), Want: "v", Done: ms(i*250 + 20)})
	}
	r.Loss.Checked = 120
	r.Linearizable = LinResult{Result: "Illegal", Key: "k1-12"}
	// Close events: three sentinels' +sdown, +odown, +switch-master within 200 ms.
	for i, typ := range []string{"+sdown", "+sdown", "+sdown", "+odown", "+try-failover", "+elected-leader",
		"+selected-slave", "+promoted-slave", "+failover-end", "+switch-master", "+switch-master"} {
		r.Events = append(r.Events, TimedEvent{At: ms(4000 + 20*i), Type: typ})
	}
	r.MasterChanges = []TimedEvent{{At: ms(4230), Type: "client:master"}}
	return r
}

func TestSVGMarksLostWritesAndLaysOutLabels(t *testing.T) {
	var buf bytes.Buffer
	if err := renderTestReport().WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if n := strings.Count(svg, `class="lost"`); n != 5 {
		t.Errorf("%d lost-write ticks, want 5", n)
	}
	if !strings.Contains(svg, `class="lost-window"`) {
		t.Error("no shaded window of the lost writes")
	}
	if !strings.Contains(svg, "acknowledged writes lost: 5 of 120") || !strings.Contains(svg, "NOT linearizable") {
		t.Error("totals missing from the picture")
	}
	re := regexp.MustCompile(`<text class="label" x="([0-9.]+)" y="([0-9.]+)"[^>]*>([^<]*)</text>`)
	type box struct{ x0, y0, x1, y1 float64 }
	var boxes []box
	var texts []string
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		txt := strings.ReplaceAll(m[3], "&#43;", "+")
		texts = append(texts, txt)
		boxes = append(boxes, box{x, y - 11, x + 2 + labelCharW*float64(len([]rune(txt))), y + 2})
	}
	for _, want := range []string{"+sdown ×3", "+odown", "+switch-master ×2", "client:master", "+promoted-slave"} {
		found := false
		for _, s := range texts {
			found = found || s == want
		}
		if !found {
			t.Errorf("no label %q in %q", want, texts)
		}
	}
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			a, b := boxes[i], boxes[j]
			if a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 {
				t.Errorf("labels %q and %q overlap: %v %v", texts[i], texts[j], a, b)
			}
		}
	}
}

// TestSVGWriteSample writes the sample picture to $VIGIL_SVG_OUT (to look at).
func TestSVGWriteSample(t *testing.T) {
	out := os.Getenv("VIGIL_SVG_OUT")
	if out == "" {
		t.Skip("VIGIL_SVG_OUT not set")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := renderTestReport().WriteSVG(f); err != nil {
		t.Fatal(err)
	}
}
