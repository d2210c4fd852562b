#!/usr/bin/perl
# Calls the service through the stub SOAP::Lite->service builds from the live WSDL and prints what a
# Perl caller sees, as JSON.
# Usage: client.pl 1.1|1.2 WSDL_URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG
use strict;
use warnings;
use JSON::PP;
use SOAP::Lite;

my ($version, $wsdl, $check_reg, $usa_reg, $usa_state, $mot_reg, $missing_reg, $empty_reg, $quoted_reg) = @ARGV;

# The version has to be chosen before the stub is built: setting it on the stub afterwards leaves
# the envelope without a namespace (see README).
SOAP::Lite->soapversion($version);
my $svc = SOAP::Lite->service($wsdl);

# SOAP::Lite's stubs return undef on a fault unless told otherwise; this is the usual handler.
# Its faultstring/faultcode accessors read SOAP 1.1 names only, so for SOAP 1.2 the fault is read
# from the SOM's Code/Reason/Detail (see README).
$svc->on_fault(sub {
    my ($soap, $res) = @_;
    die { exception => 'transport: ' . $soap->transport->status } unless ref $res;
    my $f = $res->fault || {};
    die {
        error  => $version eq '1.2' ? $f->{Reason}{Text} : $res->faultstring,
        code   => $version eq '1.2' ? $f->{Code}{Value} : $res->faultcode,
        detail => ($version eq '1.2' ? $f->{Detail} : $res->faultdetail || {})->{ErrorCode},
    };
});

sub text { my $v = shift; return defined $v && !ref $v ? "$v" : undef }

sub vehicle {
    my $v = shift;
    my $d = $v->{vehicleData} || {};
    return {
        vehicleJson => $v->{vehicleJson},
        description => text($d->{Description}),
        year        => text($d->{RegistrationYear}),
        make        => text(ref $d->{CarMake} ? $d->{CarMake}{CurrentTextValue} : undef),
        engineSize  => text(ref $d->{EngineSize} ? $d->{EngineSize}{CurrentValue} : undef),
    };
}

# A list of one string arrives as a scalar, of several as an array reference.
sub strings {
    my $a = shift;
    return [] unless ref $a eq 'HASH' && defined $a->{string};
    my $s = $a->{string};
    return [map { "$_" } ref $s eq 'ARRAY' ? @$s : ($s)];
}

sub list { my $x = shift; return !defined $x ? [] : ref $x eq 'ARRAY' ? $x : [$x] }

sub mot {
    my $m = shift;
    my @tests = map {
        { testDate => $_->{TestDate}, result => $_->{Result}, odometer => $_->{Odometer},
          failureReasons => strings($_->{FailureReasons}), advisories => strings($_->{Advisories}) }
    } @{ list(ref $m->{Tests} ? $m->{Tests}{UKTest} : undef) };
    my @rows = map { strings($_) } @{ list(ref $m->{ExtendedInformation} ? $m->{ExtendedInformation}{ArrayOfString} : undef) };
    return { taxDate => $m->{taxDate}, tests => \@tests, extended => \@rows };
}

sub run {
    my $call = shift;
    my $r = eval { $call->() };
    return $r unless $@;
    return $@ if ref $@ eq 'HASH';
    return { exception => "$@" };
}

my %out = (
    check   => run(sub { vehicle($svc->Check($check_reg, 'demo')) }),
    usa     => run(sub { vehicle($svc->CheckUSA($usa_reg, $usa_state, 'demo')) }),
    mot     => run(sub { mot($svc->UKMOT($mot_reg, undef, 'demo')) }),
    missing => run(sub { { unexpected => vehicle($svc->Check($missing_reg, 'demo') || {}) } }),
    empty   => run(sub { vehicle($svc->Check($empty_reg, 'demo')) }),
    quoted  => run(sub { vehicle($svc->Check($quoted_reg, 'demo')) }),
);
binmode STDOUT;
print JSON::PP->new->utf8->canonical->encode(\%out);
