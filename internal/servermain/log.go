package servermain

import (
	"fmt"
	"os"
	"strings"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/logging"
)

// showLogo logs the banner: raw text on a console, one JSON event (with
// logo=true and the banner as message) otherwise, so JSON stays one object a
// line.
func showLogo(log zerolog.Logger, out *logging.Output, port, pid int) {
	banner := logo(port, pid)
	if out.Console {
		if log.GetLevel() <= zerolog.InfoLevel {
			fmt.Fprint(out.W, banner)
		}
		return
	}
	log.Info().Bool("logo", true).Msg(banner)
}

// logo is Vigil's banner. The text beside the eye keeps the lines tools and
// people look for in Redis's logo: version, mode, Port and PID.
func logo(port, pid int) string {
	art := []string{
		`                 .-'''''''''-.                 `,
		`             .-'    .---.    '-.             `,
		`          .-'      /     \      '-.          `,
		`        <         |  (@)  |         >        `,
		`          '-.      \     /      .-'          `,
		`             '-.    '---'    .-'             `,
		`                 '-._____.-'                 `,
		`                                             `,
		`                  V I G I L                  `,
	}
	text := []string{
		"Vigil " + version(),
		fmt.Sprintf("Redis %s (00000000/0) 64 bit", redisVersion()),
		"",
		fmt.Sprintf("Running mode=standalone, port=%d.", port),
		fmt.Sprintf("Port: %d", port),
		fmt.Sprintf("PID: %d", pid),
		"",
		"",
		"https://github.com/vigil-kv/vigil",
	}
	width := 0
	for i, line := range art {
		art[i] = strings.TrimRight(line, " ")
		width = max(width, len(art[i]))
	}
	var b strings.Builder
	b.WriteString("\n")
	for i, line := range art {
		if i < len(text) && text[i] != "" {
			b.WriteString(line)
			b.WriteString(strings.Repeat(" ", width-len(line)))
			b.WriteString("   ")
			b.WriteString(text[i])
		} else {
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

// writePidFile writes the pid and a newline, as Redis's createPidFile.
func writePidFile(path string, pid int) error {
	return os.WriteFile(path, []byte(fmt.Sprintf("%d\n", pid)), 0o644)
}
