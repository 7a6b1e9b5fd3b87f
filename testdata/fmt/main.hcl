project = "fmt"

service "a" {
    port = 8080
}
