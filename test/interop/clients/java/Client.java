// Calls the service through the stub Apache Axis 1.4 WSDL2Java generated (package regproxy) and
// prints what a Java caller sees, as one JSON object on stdout.
// Usage: java Client URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG

import java.io.PrintStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.axis.AxisFault;
import regproxy.*;

public class Client {
    static String str(Object o) {
        if (o == null) return "null";
        String s = o.toString();
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String obj(String... kv) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < kv.length; i += 2) parts.add(str(kv[i]) + ":" + kv[i + 1]);
        return "{" + String.join(",", parts) + "}";
    }

    static String arr(String[] items) {
        List<String> parts = new ArrayList<>();
        if (items != null) for (String s : items) parts.add(str(s));
        return "[" + String.join(",", parts) + "]";
    }

    static Object value(IntegerValue v) { return v == null ? null : v.get_value(); }
    static Object value(TextValue v) { return v == null ? null : v.get_value(); }

    static String vehicle(Vehicle v) {
        VehicleData d = v.getVehicleData();
        return obj(
            "vehicleJson", str(v.getVehicleJson()),
            "description", str(d == null ? null : value(d.getDescription())),
            "year", str(d == null ? null : value(d.getRegistrationYear())),
            "make", str(d == null || d.getCarMake() == null ? null : value(d.getCarMake().getCurrentTextValue())),
            "engineSize", str(d == null || d.getEngineSize() == null ? null : value(d.getEngineSize().getCurrentValue())));
    }

    static String mot(UKMOTData m) {
        List<String> tests = new ArrayList<>();
        if (m.getTests() != null) for (UKTest t : m.getTests())
            tests.add(obj("testDate", str(t.getTestDate()), "result", str(t.getResult()), "odometer", str(t.getOdometer()),
                "failureReasons", arr(t.getFailureReasons()), "advisories", arr(t.getAdvisories())));
        List<String> rows = new ArrayList<>();
        if (m.getExtendedInformation() != null) for (String[] row : m.getExtendedInformation()) rows.add(arr(row));
        return obj("taxDate", str(m.getTaxDate()), "tests", "[" + String.join(",", tests) + "]", "extended", "[" + String.join(",", rows) + "]");
    }

    static String failure(Exception e) {
        if (e instanceof AxisFault) {
            AxisFault f = (AxisFault) e;
            StringBuilder detail = new StringBuilder();
            if (f.getFaultDetails() != null) for (org.w3c.dom.Element el : f.getFaultDetails()) {
                if (el.getLocalName().equals("ErrorCode")) detail.append(el.getTextContent());
            }
            return obj("error", str(f.getFaultString()), "code", str(f.getFaultCode() == null ? null : f.getFaultCode().getLocalPart()),
                "detail", str(detail.toString()));
        }
        return obj("exception", str(e.toString()));
    }

    static String run(Callable<String> call) {
        try { return call.call(); } catch (Exception e) { return failure(e); }
    }

    public static void main(String[] a) throws Exception {
        RegSoap_PortType reg = new RegLocator().getRegSoap(new URL(a[0]));
        ((org.apache.axis.client.Stub) reg).setTimeout(20000);
        List<String> parts = new ArrayList<>();
        parts.add(str("check") + ":" + run(() -> vehicle(reg.check(a[1], "demo"))));
        parts.add(str("usa") + ":" + run(() -> vehicle(reg.checkUSA(a[2], a[3], "demo"))));
        parts.add(str("mot") + ":" + run(() -> mot(reg.UKMOT(a[4], null, "demo"))));
        parts.add(str("missing") + ":" + run(() -> obj("unexpected", vehicle(reg.check(a[5], "demo")))));
        parts.add(str("empty") + ":" + run(() -> vehicle(reg.check(a[6], "demo"))));
        parts.add(str("quoted") + ":" + run(() -> vehicle(reg.check(a[7], "demo"))));
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        out.print("{" + String.join(",", parts) + "}");
        out.flush();
    }
}
