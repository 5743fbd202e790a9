module mmkit.test/namesrun

go 1.25
