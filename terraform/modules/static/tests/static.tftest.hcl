variables {
  hosts = [
    { name = "b", address = "10.0.0.2", disk = "hdd", device = "/dev/sdb" },
    { name = "a", address = "10.0.0.1", user = "bench", key_file = "/keys/id" },
  ]
}

run "inventory_sorted_with_defaults" {
  command = apply

  assert {
    condition     = length(output.inventory) == 2
    error_message = "one inventory entry per host"
  }
  assert {
    condition     = output.inventory[0].name == "a" && output.inventory[0].port == 22
    error_message = "sorted by name, default port 22"
  }
  assert {
    condition     = output.inventory[0].disk == "ssd" && output.inventory[1].disk == "hdd"
    error_message = "disk kinds kept, ssd by default"
  }
  assert {
    condition     = output.inventory[1].device == "/dev/sdb" && output.inventory[0].data_dir == "/var/tmp/lsmbench"
    error_message = "device and default data_dir"
  }
}

run "bad_disk_kind_is_refused" {
  command = plan

  variables {
    hosts = [{ name = "x", address = "10.0.0.9", disk = "tape" }]
  }
  expect_failures = [var.hosts]
}

run "duplicate_names_are_refused" {
  command = plan

  variables {
    hosts = [{ name = "x", address = "10.0.0.9" }, { name = "x", address = "10.0.0.10" }]
  }
  expect_failures = [var.hosts]
}
