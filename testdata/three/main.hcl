# Three independent services, for the failed-apply test.
project = "three"

service "a" {
  id   = "a-1"
  port = 19001
}

service "b" {
  id   = "b-1"
  port = 19002
}

service "c" {
  id   = "c-1"
  port = 19003
}
