<?php
// Calls the service through PHP's SoapClient built from the live WSDL and prints what a PHP caller
// sees, as JSON. Usage: php client.php 1.1|1.2 WSDL_URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG

[, $version, $wsdl, $checkReg, $usaReg, $usaState, $motReg, $missingReg, $emptyReg, $quotedReg] = $argv;

$client = new SoapClient($wsdl, [
    'soap_version' => $version === '1.2' ? SOAP_1_2 : SOAP_1_1,
    'exceptions' => true,
    'cache_wsdl' => WSDL_CACHE_NONE,
    'connection_timeout' => 20,
    // Without this, a list of one element arrives as a scalar instead of an array of one.
    'features' => SOAP_SINGLE_ELEMENT_ARRAYS,
]);

// simpleContent with an attribute arrives as an object holding the text in "_".
function value($v) {
    if ($v === null) return null;
    if (is_object($v)) return property_exists($v, '_') && $v->_ !== null ? (string)$v->_ : null;
    return (string)$v;
}

function vehicle($v) {
    $d = $v->vehicleData ?? null;
    return [
        'vehicleJson' => $v->vehicleJson ?? null,
        'description' => value($d->Description ?? null),
        'year' => value($d->RegistrationYear ?? null),
        'make' => value($d->CarMake->CurrentTextValue ?? null),
        'engineSize' => value($d->EngineSize->CurrentValue ?? null),
    ];
}

function strings($a) {
    return array_map('strval', $a->string ?? []);
}

function mot($m) {
    $tests = [];
    foreach ($m->Tests->UKTest ?? [] as $t) {
        $tests[] = ['testDate' => $t->TestDate ?? null, 'result' => $t->Result ?? null, 'odometer' => $t->Odometer ?? null,
            'failureReasons' => strings($t->FailureReasons ?? null), 'advisories' => strings($t->Advisories ?? null)];
    }
    $rows = [];
    foreach ($m->ExtendedInformation->ArrayOfString ?? [] as $r) $rows[] = strings($r);
    return ['taxDate' => $m->taxDate ?? null, 'tests' => $tests, 'extended' => $rows];
}

function run(callable $call) {
    try {
        return $call();
    } catch (SoapFault $f) {
        $detail = $f->detail->ErrorCode ?? null;
        return ['error' => $f->getMessage(), 'code' => $f->faultcode, 'detail' => $detail];
    } catch (Throwable $e) {
        return ['exception' => get_class($e) . ': ' . $e->getMessage()];
    }
}

$out = [
    'check' => run(fn() => vehicle($client->Check(['RegistrationNumber' => $checkReg, 'username' => 'demo'])->CheckResult)),
    'usa' => run(fn() => vehicle($client->CheckUSA(['RegistrationNumber' => $usaReg, 'State' => $usaState, 'username' => 'demo'])->CheckUSAResult)),
    'mot' => run(fn() => mot($client->UKMOT(['RegistrationNumber' => $motReg, 'username' => 'demo'])->UKMOTResult)),
    'missing' => run(fn() => ['unexpected' => vehicle($client->Check(['RegistrationNumber' => $missingReg, 'username' => 'demo'])->CheckResult)]),
    'empty' => run(fn() => vehicle($client->Check(['RegistrationNumber' => $emptyReg, 'username' => 'demo'])->CheckResult)),
    'quoted' => run(fn() => vehicle($client->Check(['RegistrationNumber' => $quotedReg, 'username' => 'demo'])->CheckResult)),
];
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
