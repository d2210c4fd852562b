<?php
// A caller written the way the vendor's published PHP client calls the public service: HTTP GET
// /api/reg.asmx/{Operation}?RegistrationNumber=...&username=...&state=... with `state` in lower
// case on every operation (empty where the operation takes none), read with file_get_contents,
// and vehicleJson cut out of the XML with a regular expression and decoded.
//
// Usage: php regcheck-get.php BASE_URL CALLS_JSON
// CALLS_JSON: [{"operation":"Check","registration":"RG11 ABC","state":"","username":"demo"}, ...]
// Prints one JSON line: one report per call.

$base = $argv[1];
$calls = json_decode($argv[2], true);
$reports = [];

foreach ($calls as $c) {
    $url = $base . '/api/reg.asmx/' . $c['operation']
        . '?RegistrationNumber=' . urlencode($c['registration'])
        . '&username=' . urlencode($c['username'])
        . '&state=' . urlencode($c['state']);
    $context = stream_context_create(['http' => ['method' => 'GET', 'ignore_errors' => true, 'timeout' => 20]]);
    $xml = file_get_contents($url, false, $context);
    $status = 0;
    foreach ($http_response_header as $h) {
        if (preg_match('#^HTTP/\S+\s+(\d{3})#', $h, $m)) $status = (int)$m[1];
    }
    $report = ['operation' => $c['operation'], 'status' => $status, 'root' => null, 'description' => null, 'tests' => null, 'error' => null];
    if ($status === 200) {
        if (preg_match('#<(Vehicle|UKMOTData)\s#', $xml, $m)) $report['root'] = $m[1];
        if (preg_match('#<vehicleJson>(.*?)</vehicleJson>#s', $xml, $m)) {
            $vehicle = json_decode(html_entity_decode($m[1], ENT_QUOTES | ENT_XML1, 'UTF-8'), true);
            $report['description'] = is_array($vehicle) ? ($vehicle['Description'] ?? null) : 'vehicleJson is not JSON';
        }
        if ($report['root'] === 'UKMOTData') $report['tests'] = preg_match_all('#<UKTest>#', $xml);
    } else {
        $report['error'] = $xml;
    }
    $reports[] = $report;
}
echo json_encode($reports), "\n";
