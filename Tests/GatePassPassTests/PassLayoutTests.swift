import GatePassPass
import Testing

@Suite struct PassLayoutTests {
    @Test func gp1CodeIsDrawnLargeOnWholeUnitsInTheBox() throws {
        let layout = try PassLayout(content: gp1Content, fonts: fonts)
        #expect(layout.qr.code.width <= 25)
        #expect(layout.qr.moduleSize == PassLayout.qrBoxSide / layout.qr.modulesWithQuietZone)
        #expect(layout.qr.moduleSize >= 25)
        let drawn = layout.qr.moduleSize * layout.qr.modulesWithQuietZone
        #expect(layout.qr.originX >= layout.qr.box.x && layout.qr.originX + drawn <= layout.qr.box.x + layout.qr.box.width)
        #expect(layout.qr.originY >= layout.qr.box.y && layout.qr.originY + drawn <= layout.qr.box.y + layout.qr.box.height)
    }

    @Test func version9CodeFillsTheBoxAtTwelveUnitsAModule() throws {
        let layout = try PassLayout(content: gp2Content, fonts: fonts)
        #expect(gp2Payload.utf8.count == 132)
        #expect(layout.qr.code.width == 53)  // version 9
        #expect(layout.qr.modulesWithQuietZone == 61)
        #expect(layout.qr.moduleSize == 12)
        #expect(layout.qr.originX == layout.qr.box.x && layout.qr.originY == layout.qr.box.y)
    }

    @Test func aPayloadBeyondVersion9IsRefused() {
        var content = gp1Content
        // libqrencode picks the smallest version (and mixes in alphanumeric segments where they
        // are shorter), so a few bytes over 132 may still fit; 200 cannot.
        content.qrPayload = gp2Payload + String(repeating: "x", count: 68)
        #expect(throws: PassError.payloadTooLong(byteCount: 200, modules: 73)) {
            try PassLayout(content: content, fonts: fonts)
        }
    }

    @Test func everyLineStaysInsideTheMarginsAndInOrder() throws {
        for content in [gp1Content, gp2Content, hostileContent] {
            let layout = try PassLayout(content: content, fonts: fonts)
            var previousBaseline = 0.0
            for line in layout.lines {
                #expect(line.x >= Double(PassLayout.margin) - 0.001, "\(line.role)")
                #expect(line.x + line.width <= Double(PassLayout.pageWidth - PassLayout.margin) + 0.001, "\(line.role)")
                #expect(line.baseline > previousBaseline)
                previousBaseline = line.baseline
                // The outline itself stays inside too (glyphs may overhang their advance a little).
                for command in layout.outline(of: line, fonts: fonts) {
                    if case let .move(x, y) = command {
                        #expect(x >= Double(PassLayout.margin) - 12 && x <= Double(PassLayout.pageWidth - PassLayout.margin) + 12)
                        #expect(y > 0 && y < Double(PassLayout.pageHeight))
                    }
                }
            }
            // Text above the QR box ends above it, text below starts below it.
            for line in layout.lines {
                let top = line.baseline - line.fontSize, bottom = line.baseline + line.fontSize * 0.3
                #expect(bottom < Double(layout.qr.box.y) || top > Double(layout.qr.box.y + layout.qr.box.height), "\(line.role)")
            }
        }
    }

    @Test func longNamesShrinkThenAreCutWithAnEllipsis() throws {
        let layout = try PassLayout(content: hostileContent, fonts: fonts)
        let name = try #require(layout.lines.first { $0.role == .visitorName })
        #expect(name.fontSize == 40)
        #expect(name.text.hasSuffix("\u{2026}"))
        #expect(name.text.count < 60)
        var medium = gp1Content
        medium.visitorName = "Maximiliane Alexandra von Hohenzollern"
        let shrunk = try #require(try PassLayout(content: medium, fonts: fonts).lines.first { $0.role == .visitorName })
        #expect(shrunk.fontSize < 84 && shrunk.fontSize >= 40)
        #expect(shrunk.text == medium.visitorName)
    }

    @Test func shortIdIsGroupedInLargeMonospace() throws {
        let layout = try PassLayout(content: gp1Content, fonts: fonts)
        let code = try #require(layout.lines.first { $0.role == .shortId })
        #expect(code.text == "7K3Q-X9MZ")
        #expect(code.face == .monospaceBold)
        #expect(code.fontSize == 150)
    }
}

@Suite struct PassTextTests {
    @Test func controlFormatAndBidiCharactersAreDropped() {
        #expect(PassText.cleaned("A\u{202E}b\u{200F}c\u{0007}\u{001B}d\u{0000}e\u{FEFF}") == "Abcde")
    }

    @Test func whiteSpaceRunsBecomeOneSpaceAndEndsAreTrimmed() {
        #expect(PassText.cleaned("  Ada \n\t Lovelace\u{2028} ") == "Ada Lovelace")
    }

    @Test func combiningMarksAreCappedAtTwoPerCharacter() {
        let tower = "Z" + String(repeating: "\u{0301}", count: 50) + "a"
        #expect(PassText.cleaned(tower).unicodeScalars.count == 4)
    }

    @Test func textIsCappedAtTheLimitWithAnEllipsis() {
        let cleaned = PassText.cleaned(String(repeating: "x", count: 4000), limit: 20)
        #expect(cleaned.unicodeScalars.count == 20)
        #expect(cleaned.hasSuffix("\u{2026}"))
        #expect(PassText.cleaned("short", limit: 20) == "short")
    }
}
