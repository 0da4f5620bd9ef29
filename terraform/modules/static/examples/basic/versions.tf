terraform {
  required_version = ">= 1.4.0, < 2.0.0"
}
