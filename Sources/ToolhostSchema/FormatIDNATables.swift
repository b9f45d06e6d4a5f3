// The few Unicode data the IDNA2008 rules need beyond the standard library's properties: joining types, scripts and
// bidi classes, as sorted code point ranges.

/// Sorted code point ranges, read from a list of hexadecimal code points and ranges such as
/// `"5D0-5EA 5F0"`.
struct CodePointSet: Sendable {
  private let ranges: [ClosedRange<UInt32>]

  init(_ list: String) {
    ranges = list.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { item in
      let ends = item.split(separator: "-").compactMap { UInt32($0, radix: 16) }
      guard let low = ends.first, let high = ends.last, ends.count <= 2, low <= high else {
        return nil
      }
      return low...high
    }.sorted { $0.lowerBound < $1.lowerBound }
  }

  /// Whether `c` is in one of the ranges.
  func contains(_ c: Unicode.Scalar) -> Bool {
    var low = 0
    var high = ranges.count
    while low < high {
      let middle = (low + high) / 2
      if ranges[middle].upperBound < c.value {
        low = middle + 1
      } else if ranges[middle].lowerBound > c.value {
        high = middle
      } else {
        return true
      }
    }
    return false
  }
}

/// The few Unicode data that `Unicode.Scalar.Properties` lacks, for the IDNA2008 rules.
enum UnicodeTables {
  /// Joining_Type D (dual-joining), from Unicode's ArabicShaping.txt.
  static let dualJoining = CodePointSet(
    """
    620 626 628 62A-62E 633-63F 641-647 649-64A 66E-66F 678-687 69A-6BF 6C1-6C2 6CC 6CE
    6D0-6D1 6FA-6FC 6FF 712-714 71A-71D 71F-727 729 72B 72D-72E 74E-758 75C-76A 76D-770 772
    775-777 77A-77F 7CA-7EA 841-845 848 84A-853 855 860 862-865 868 886 889-88D 88F 8A0-8A9
    8AF-8B0 8B3-8B8 8BA-8C8 1807 1820-1878 1887-18A8 18AA A840-A871 10AC0-10AC4 10AD3-10AD6
    10AD8-10ADC 10ADE-10AE0 10AEB-10AEE 10B80 10B82 10B86-10B88 10B8A-10B8B 10B8D 10B90
    10BAD-10BAE 10D01-10D21 10D23 10EC3-10EC4 10EC6-10EC7 10F30-10F32 10F34-10F44 10F51-10F53
    10F70-10F73 10F76-10F81 10FB0 10FB2-10FB3 10FB8 10FBB-10FBC 10FBE-10FBF 10FC1 10FC4 10FCA
    1E900-1E943
    """)

  /// Joining_Type R (right-joining), from Unicode's ArabicShaping.txt.
  static let rightJoining = CodePointSet(
    """
    622-625 627 629 62F-632 648 671-673 675-677 688-699 6C0 6C3-6CB 6CD 6CF 6D2-6D3 6D5
    6EE-6EF 710 715-719 71E 728 72A 72C 72F 74D 759-75B 76B-76C 771 773-774 778-779 840
    846-847 849 854 856-858 867 869-86A 870-882 88E 8AA-8AC 8AE 8B1-8B2 8B9 10AC5 10AC7
    10AC9-10ACA 10ACE-10AD2 10ADD 10AE1 10AE4 10AEF 10B81 10B83-10B85 10B89 10B8C 10B8E-10B8F
    10B91 10BA9-10BAC 10D22 10EC2 10F33 10F54 10F74-10F75 10FB4-10FB6 10FB9-10FBA 10FBD
    10FC2-10FC3 10FC9
    """)

  /// Joining_Type L (left-joining), from Unicode's ArabicShaping.txt.
  static let leftJoining = CodePointSet("A872 10ACD 10AD7 10D00 10ED9-10EEE 10FCB")

  /// Script=Greek, from Unicode's Scripts.txt.
  static let greek = CodePointSet(
    """
    370-373 375-377 37A-37D 37F 384 386 388-38A 38C 38E-3A1 3A3-3E1 3F0-3FF 1D26-1D2A
    1D5D-1D61 1D66-1D6A 1DBF 1F00-1F15 1F18-1F1D 1F20-1F45 1F48-1F4D 1F50-1F57 1F59 1F5B 1F5D
    1F5F-1F7D 1F80-1FB4 1FB6-1FC4 1FC6-1FD3 1FD6-1FDB 1FDD-1FEF 1FF2-1FF4 1FF6-1FFE 2126 AB65
    10140-1018E 101A0 1D200-1D245 1DFF3-1DFF4
    """)

  /// Script=Hebrew, from Unicode's Scripts.txt.
  static let hebrew = CodePointSet(
    "591-5C9 5D0-5EA 5EF-5F4 FB1D-FB36 FB38-FB3C FB3E FB40-FB41 FB43-FB44 FB46-FB4F")

  /// Script=Hiragana, from Unicode's Scripts.txt.
  static let hiragana = CodePointSet(
    "3041-3096 309D-309F 1B001-1B11F 1B123 1B132 1B150-1B152 1F200")

  /// Script=Katakana, from Unicode's Scripts.txt.
  static let katakana = CodePointSet(
    """
    30A1-30FA 30FD-30FF 31F0-31FF 32D0-32FE 3300-3357 FF66-FF6F FF71-FF9D 1AFF0-1AFF3
    1AFF5-1AFFB 1AFFD-1AFFE 1B000 1B120-1B122 1B124-1B128 1B155 1B164-1B168
    """)

  /// Script=Han, from Unicode's Scripts.txt.
  static let han = CodePointSet(
    """
    2E80-2E99 2E9B-2EF3 2F00-2FD5 3005 3007 3021-3029 3038-303B 3400-4DBF 4E00-9FFF F900-FA6D
    FA70-FAD9 16FE2-16FE3 16FF0-16FF6 20000-2A6DF 2A700-2B81E 2B820-2CEAD 2CEB0-2EBE0
    2EBF0-2EE5D 2F800-2FA1D 30000-3134A 31350-33479
    """)

  /// Bidi_Class R, by the blocks whose unlisted code points default to it.
  static let rightToLeft = CodePointSet(
    """
    590-5FF 7C0-85F FB1D-FB4F 10800-10CFF 10D40-10EBF 10F00-10F2F 10F70-10FFF 1E800-1EC6F
    1ECC0-1ECFF 1ED50-1EDFF 1EF00-1EFFF
    """)

  /// Bidi_Class AL, by the blocks whose unlisted code points default to it.
  static let arabicLetter = CodePointSet(
    """
    600-7BF 860-8FF FB50-FDCF FDF0-FDFF FE70-FEFF 10D00-10D3F 10EC0-10EFF 10F30-10F6F
    1EC70-1ECBF 1ED00-1ED4F 1EE00-1EEFF
    """)

  /// Nonspacing marks (PVALID) of Bidi_Class L.
  static let leftToRightMarks = CodePointSet("CBF CC6 11A07-11A08 11C3F")

  /// Modifier letters (PVALID) of Bidi_Class ON.
  static let neutralLetters = CodePointSet("2B9-2BA 2C6-2CF 2EC 2E2F A67F A717-A71F A788")

  /// Bidi_Class AN (Arabic numbers).
  static let arabicNumber = CodePointSet(
    "600-605 660-669 66B-66C 6DD 890-891 8E2 10D30-10D39 10E60-10E7E")
}
